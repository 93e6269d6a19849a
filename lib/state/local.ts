/**
 * dynalite, DynamoDB's wire protocol on a local port: persisted under a folder for `npm start`,
 * in memory for tests.
 */
import type { AddressInfo } from 'node:net';
import dynalite from 'dynalite';

export interface LocalDynamo {
  endpoint: string;
  close(): Promise<void>;
}

export async function startDynalite(options: { path?: string; port?: number } = {}): Promise<LocalDynamo> {
  const server = dynalite({ path: options.path, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
}
