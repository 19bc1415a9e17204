/**
 * A port for a server that another process will open (a child process, a private PostgreSQL cluster).
 *
 * Ports come from below Linux's ephemeral range (32768-60999), chosen at random and probed: the kernel
 * never hands such a port to an outgoing connection, so nothing but another explicit listener can take
 * it between this probe and the other process's listen (a port from `listen(0)` can be taken by any
 * outgoing connection of a parallel test in that window).
 */
import { createServer } from 'node:net';

const LOWEST = 12_000;
const RANGE = 20_000;

function canListenOn(port: number): Promise<boolean> {
  return new Promise((done) => {
    const probe = createServer();
    probe.once('error', () => done(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => done(true)));
  });
}

/** A port between 12000 and 32000 that nothing listens on right now. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * RANGE);
    if (await canListenOn(port)) return port;
  }
  throw new Error(`no free port between ${LOWEST} and ${LOWEST + RANGE}`);
}
