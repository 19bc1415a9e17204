/**
 * A TCP proxy on 127.0.0.1 in front of a server (a private PostgreSQL cluster) that holds back every
 * byte the server sends by `delayMs`, in order: a slow database as its clients see it, where nothing
 * fails and every answer arrives late. What clients send passes at once. `delayMs` may be changed at
 * any time; it applies to bytes that arrive from the server afterwards. `silenceAfter` makes a
 * connection half-open: once a client sends bytes containing that text, nothing the server sends on
 * that connection reaches the client any more (until the connection closes). `cutNextOn` closes, at
 * once, the next connection whose client sends that text (before it reaches the server), then clears.
 * `blackholeAfter` drops, from the moment a client sends bytes containing that text (those included),
 * everything that connection carries either way, and closes nothing: a network path that died silently
 * in the middle of a conversation, as the server sees it (it waits for the next statement).
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export class DelayingProxy {
  delayMs = 0;
  silenceAfter: string | undefined;
  cutNextOn: string | undefined;
  blackholeAfter: string | undefined;
  readonly #sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number): Promise<DelayingProxy> {
    let proxy: DelayingProxy | undefined;
    const server = createServer((client) => proxy!.#pipe(client, targetPort));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('the proxy has no port');
    proxy = new DelayingProxy(server, address.port);
    return proxy;
  }

  #pipe(client: Socket, targetPort: number): void {
    const upstream = connect(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    let silent = false;
    let blackholed = false;
    client.on('data', (chunk: Buffer) => {
      if (this.silenceAfter !== undefined && chunk.includes(this.silenceAfter)) silent = true;
      if (this.blackholeAfter !== undefined && chunk.includes(this.blackholeAfter)) blackholed = silent = true;
      if (this.cutNextOn !== undefined && chunk.includes(this.cutNextOn)) {
        this.cutNextOn = undefined;
        client.destroy();
        upstream.destroy();
        return;
      }
      if (!blackholed) upstream.write(chunk);
    });
    // Each chunk leaves at its arrival plus the delay then in force, never before the chunk ahead of it.
    let releasedAt = 0;
    const later = (action: () => void): void => {
      releasedAt = Math.max(releasedAt, Date.now() + this.delayMs);
      setTimeout(action, releasedAt - Date.now());
    };
    upstream.on('data', (chunk: Buffer) => {
      if (!silent) later(() => client.write(chunk));
    });
    upstream.on('end', () => later(() => client.end()));
    client.on('close', () => upstream.destroy());
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
