/**
 * One way to start a stand-in for a service the product calls: a real `node:http` server on
 * 127.0.0.1, on a port the system picks, that reads each request's body whole and hands it to the
 * stand-in's handler. Every stand-in the tests start is built on it, in this folder or in the one
 * test file that needs it, so each says only how its service answers and what it keeps.
 *
 * A stand-in is closed by its caller (`close()`, idempotent), and in a vitest run also after its
 * test file, so one a test forgot does not keep the worker alive. Vitest is loaded only under
 * vitest: the bench scripts start these stand-ins outside it.
 *
 * @example
 * const stand = await standIn((req, body, res) => {
 *   res.writeHead(200, { 'Content-Type': 'application/json' });
 *   res.end(JSON.stringify({ echoed: body }));
 * });
 * await fetch(`${stand.url}/path`, { method: 'POST', body: 'hi' });
 * await stand.close();
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Answers one request: `body` is the whole body as UTF-8 text, `raw` its bytes (for a size limit).
 * The handler answers on `res`, at once, later, or never (a hang the caller releases).
 */
export type StandInHandler = (
  req: IncomingMessage,
  body: string,
  res: ServerResponse,
  raw: Buffer,
) => void | Promise<void>;

export interface StandIn {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  url: string;
  port: number;
  server: Server;
  /** Stops listening and drops every open connection; resolves when the server is closed. */
  close(): Promise<void>;
}

/** The whole body of `req`, as bytes. */
export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

const open = new Set<StandIn>();

if (process.env.VITEST) {
  const { afterAll } = await import('vitest');
  // Registered when a test file first imports this module (each file has its own module graph).
  afterAll(async () => {
    await Promise.all([...open].map((s) => s.close()));
  });
}

/** Starts a stand-in answering with `handler`; see the module's comment. */
export async function standIn(handler: StandInHandler): Promise<StandIn> {
  const server = createServer(async (req, res) => {
    // A request its client gave up on while sending has no one to answer.
    const raw = await readBody(req).catch(() => undefined);
    if (raw) await handler(req, raw.toString('utf8'), res, raw);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  const stand: StandIn = {
    url: `http://127.0.0.1:${port}`,
    port,
    server,
    close: () => {
      open.delete(stand);
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
  open.add(stand);
  return stand;
}
