/** Local ports for tests that need a peer which is not there. */
import { createServer } from 'node:net';

/** A local port nothing listens on (connections are refused). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A local port free right now, for a server a test starts itself. */
export const freePort = closedPort;
