/**
 * A real local HTTP receiver standing in for Slack, an e-mail API or a webhook: it records every
 * request and answers as the test scripts it (status, body, Retry-After, delay, or never).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';

export interface ReceivedRequest {
  at: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  json(): unknown;
}

export type Reply =
  | { status: number; body?: string; headers?: Record<string, string>; delayMs?: number }
  | { hang: true };

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** Replies used in order for the next requests; when empty, `fallback` answers. */
  script(...replies: Reply[]): void;
  fallback: Reply;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export async function startReceiver(fallback: Reply = { status: 200, body: 'ok' }): Promise<Receiver> {
  const queue: Reply[] = [];
  const requests: ReceivedRequest[] = [];
  const hung: (() => void)[] = [];
  const receiver: Receiver = {
    url: '',
    requests,
    script: (...replies) => queue.push(...replies),
    fallback,
    close: async () => {
      for (const release of hung) release();
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
    },
  };
  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
    requests.push({
      at: Date.now(),
      method: req.method ?? '',
      path: req.url ?? '',
      headers,
      body,
      json: () => JSON.parse(body),
    });
    const reply = queue.shift() ?? receiver.fallback;
    if ('hang' in reply) {
      hung.push(() => res.destroy());
      return;
    }
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    res.writeHead(reply.status, { 'Content-Type': 'text/plain', ...reply.headers });
    res.end(reply.body ?? '');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}

/**
 * Receivers a test starts as it needs them, each closed after that test.
 *
 * @example
 * const receiver = useReceivers();
 * it('...', async () => { const slack = await receiver({ status: 429 }); ... });
 */
export function useReceivers(): (fallback?: Reply) => Promise<Receiver> {
  const open: Receiver[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((r) => r.close()));
  });
  return async (fallback) => {
    const r = await startReceiver(fallback);
    open.push(r);
    return r;
  };
}
