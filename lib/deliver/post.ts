/**
 * The HTTP POST every delivery makes, on node:http and node:https with keep-alive agents, instead
 * of `fetch`. A delivery needs a status, one header and a short body back; fetch builds WHATWG
 * request, header and stream objects around each call and writes the body chunk by chunk, which
 * costs about 1 ms of CPU more per POST on the machine `npm run bench` ran on (a pass of 1,000
 * webhook messages is a second of CPU). Here the headers and body leave in one write.
 *
 * Differences from fetch, on purpose:
 * - redirects are not followed: fetch turns a POST answered 301, 302 or 303 into a GET, which would
 *   report the alert delivered while the body never arrived. A 3xx is an answer like any other
 *   (senders.ts classifies it as a refusal, so it shows in `deliveries list` and the ops report);
 * - the answer's body is kept up to 64 KiB (enough for any error a destination explains); the rest
 *   is read and dropped.
 * Any function of the same shape can stand in (global `fetch` does).
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

export interface PostInit {
  method: 'POST';
  headers: Record<string, string>;
  body: string;
  signal?: AbortSignal;
}

export interface PostResponse {
  status: number;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
}

export type HttpPost = (url: string, init: PostInit) => Promise<PostResponse>;

const MAX_BODY_BYTES = 64 * 1024;

/**
 * An idle kept-alive socket is closed after this long, or a second before the server's own
 * announced idle timeout (`Keep-Alive: timeout=N`), whichever comes first. Servers close idle
 * connections (Node after 5 s, many proxies after 60 s); a POST written on one at the moment the
 * server closes it dies with ECONNRESET, a failed attempt for nothing. Without an agent timeout,
 * Node keeps idle sockets forever and ignores that header (it only ever shortens the agent's
 * timeout). 4 s is fetch's (undici's) own default.
 */
export const IDLE_SOCKET_MS = 4_000;

const agents = {
  http: new HttpAgent({ keepAlive: true, maxSockets: 16, timeout: IDLE_SOCKET_MS }),
  https: new HttpsAgent({ keepAlive: true, maxSockets: 16, timeout: IDLE_SOCKET_MS }),
};

function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    res.on('data', (chunk: Buffer) => {
      if (kept >= MAX_BODY_BYTES) return;
      const part = chunk.subarray(0, MAX_BODY_BYTES - kept);
      chunks.push(part);
      kept += part.length;
    });
    res.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.once('error', reject);
  });
}

/** POSTs `init.body` to `url`; resolves once the answer has been read, rejects on network errors and aborts. */
export const httpPost: HttpPost = (url, init) =>
  new Promise((resolve, reject) => {
    const target = new URL(url);
    const secure = target.protocol === 'https:';
    if (!secure && target.protocol !== 'http:') {
      reject(new Error(`unsupported URL scheme ${target.protocol}`));
      return;
    }
    const send = secure ? httpsRequest : httpRequest;
    const req = send(
      target,
      {
        method: init.method,
        headers: { ...init.headers, 'Content-Length': String(Buffer.byteLength(init.body)) },
        agent: secure ? agents.https : agents.http,
        signal: init.signal,
      },
      (res) => {
        const body = readBody(res);
        body.catch(() => {}); // surfaced through text()
        resolve({
          status: res.statusCode ?? 0,
          headers: {
            get: (name) => {
              const value = res.headers[name.toLowerCase()];
              return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
            },
          },
          text: () => body,
        });
      },
    );
    req.once('error', reject);
    req.end(init.body);
  });
