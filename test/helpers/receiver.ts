/**
 * A real local HTTP receiver standing in for Slack, an e-mail API or a webhook: it records every
 * request and answers as the test scripts it (status, body, Retry-After, delay, or never).
 */
import { afterEach } from 'vitest';
import { standIn } from './stand-in.ts';

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

/**
 * `now` stamps each request's `at` (default the real time): a test on a skipping clock passes its
 * clock's, so times it compares are on one timeline.
 */
export async function startReceiver(
  fallback: Reply = { status: 200, body: 'ok' },
  options: { now?: () => number } = {},
): Promise<Receiver> {
  const now = options.now ?? Date.now;
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
      await server.close();
    },
  };
  const server = await standIn(async (req, body, res) => {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
    requests.push({
      at: now(),
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
  receiver.url = server.url;
  return receiver;
}

/**
 * Receivers a test starts as it needs them, each closed after that test.
 *
 * @example
 * const receiver = useReceivers();
 * it('...', async () => { const slack = await receiver({ status: 429 }); ... });
 */
export function useReceivers(): (fallback?: Reply, options?: { now?: () => number }) => Promise<Receiver> {
  const open: Receiver[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((r) => r.close()));
  });
  return async (fallback, options) => {
    const r = await startReceiver(fallback, options);
    open.push(r);
    return r;
  };
}
