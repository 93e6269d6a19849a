/**
 * A heartbeat receiver stand-in (healthchecks.io's way: `<url>`, `<url>/start`, `<url>/fail` with a
 * text body): a real local HTTP server that keeps every ping in order. It can answer slowly (to
 * show a slow receiver costs a cycle nothing), and its URL can point where nothing listens.
 */
import { standIn } from './stand-in.ts';

export interface Ping {
  method: string;
  /** `success`, `start` or `fail`, from the path. */
  kind: 'success' | 'start' | 'fail' | 'other';
  body: string;
  at: number;
}

export interface HeartbeatReceiver {
  /** The check's URL (a uuid path, as healthchecks.io gives). */
  url: string;
  pings: Ping[];
  /** Answers only after this long (0: at once). */
  delayMs: number;
  close(): Promise<void>;
}

const CHECK = '/0b5a3e7c-5f4e-4c2b-9d1a-7e2f3c4b5a69';

export async function startHeartbeat(): Promise<HeartbeatReceiver> {
  const receiver: HeartbeatReceiver = {
    url: '',
    pings: [],
    delayMs: 0,
    close: () => server.close(),
  };
  const server = await standIn((req, body, res) => {
    const path = req.url ?? '';
    const kind =
      path === CHECK
        ? 'success'
        : path === `${CHECK}/start`
          ? 'start'
          : path === `${CHECK}/fail`
            ? 'fail'
            : 'other';
    receiver.pings.push({ method: req.method ?? '', kind, body, at: Date.now() });
    const answer = () => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end('OK');
    };
    if (receiver.delayMs > 0) setTimeout(answer, receiver.delayMs).unref();
    else answer();
  });
  receiver.url = `${server.url}${CHECK}`;
  return receiver;
}

/** A URL where nothing listens: a port opened and closed again. */
export async function deadUrl(): Promise<string> {
  const server = await standIn(() => {});
  await server.close();
  return `${server.url}${CHECK}`;
}
