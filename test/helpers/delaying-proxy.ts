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
 * `blackholeConnectionsThatSent` does the same, from now on, to every open connection whose client has
 * already sent that text (a connection idle since, such as a `LISTEN` one).
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export class DelayingProxy {
  delayMs = 0;
  silenceAfter: string | undefined;
  cutNextOn: string | undefined;
  blackholeAfter: string | undefined;
  readonly #sockets = new Set<Socket>();
  /** Per open connection: what its client sent so far (its first 64 KiB), and how to blackhole it. */
  readonly #connections = new Set<{ sent: string; blackhole: () => void }>();

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
    const connection = { sent: '', blackhole: () => void (blackholed = silent = true) };
    this.#connections.add(connection);
    client.on('close', () => this.#connections.delete(connection));
    client.on('data', (chunk: Buffer) => {
      if (connection.sent.length < 65_536) connection.sent += chunk.toString('latin1');
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

  /** How many times the clients of the open connections have sent `text`, all together. */
  timesSent(text: string): number {
    return [...this.#connections].reduce((sum, connection) => sum + connection.sent.split(text).length - 1, 0);
  }

  /** How many open connections have a client that has sent `text` at least `times` times. */
  connectionsThatSent(text: string, times = 1): number {
    return [...this.#connections].filter((connection) => connection.sent.split(text).length > times).length;
  }

  /** Blackholes every open connection whose client has sent `text`; returns how many. */
  blackholeConnectionsThatSent(text: string): number {
    const chosen = [...this.#connections].filter((connection) => connection.sent.includes(text));
    for (const connection of chosen) connection.blackhole();
    return chosen.length;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
