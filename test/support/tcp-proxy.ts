/**
 * A TCP proxy in front of a real server (a Redis, a Postgres), for tests of
 * what the app does when that server stops answering: `stall()` holds every
 * byte in both directions with the connections left open (a network that
 * went silent), `resume()` lets them flow again; `cut()` resets every
 * connection and refuses new ones (the server died), `restore()` accepts again
 * on the same port.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

/** A running proxy; see the module comment. */
export interface TcpProxy {
  /** The local port the proxy listens on. */
  port: number;
  /** Connections accepted so far. */
  readonly accepted: number;
  stall(): void;
  resume(): void;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** Starts a proxy on a free local port forwarding to `target` (host:port). */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let stalled = false;
  let accepted = 0;

  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    if (stalled) socket.pause();
  };
  const onConnection = (client: Socket) => {
    accepted += 1;
    const upstream = connect(target.port, target.host);
    track(client);
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  };

  let server: Server = createServer(onConnection);
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
    });
  const closeServer = () => new Promise<void>((resolve) => server.close(() => resolve()));
  const port = await listen(0);

  return {
    port,
    get accepted() {
      return accepted;
    },
    stall() {
      stalled = true;
      for (const socket of sockets) socket.pause();
    },
    resume() {
      stalled = false;
      for (const socket of sockets) socket.resume();
    },
    async cut() {
      const closed = closeServer();
      for (const socket of sockets) socket.resetAndDestroy();
      await closed;
    },
    async restore() {
      server = createServer(onConnection);
      await listen(port);
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      if (server.listening) await closeServer();
    },
  };
}
