/**
 * Serves a fetch-style handler (a Hono app) on a local port: the emulator, the HTTP API under
 * `serve` and `npm start`, and the receivers tests stand up.
 */
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export type FetchHandler = (request: Request) => Response | Promise<Response>;

/** Listens on `port` (0 picks a free one) on loopback unless `hostname` says otherwise. */
export function listen(
  fetch: FetchHandler,
  options: { port?: number; hostname?: string } = {},
): Promise<RunningServer> {
  const hostname = options.hostname ?? '127.0.0.1';
  const server = createAdaptorServer({ fetch, hostname });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, hostname, () => {
      server.off('error', reject);
      const { port } = server.address() as AddressInfo;
      const host = hostname.includes(':') ? `[${hostname}]` : hostname;
      resolve({
        url: `http://${host}:${port}`,
        port,
        close: () =>
          new Promise<void>((done) => {
            const s = server as unknown as {
              closeAllConnections?: () => void;
              close: (cb: () => void) => void;
            };
            s.close(() => done());
            s.closeAllConnections?.();
          }),
      });
    });
  });
}
