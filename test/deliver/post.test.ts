/**
 * The delivery POST (lib/deliver/post.ts) against a real local HTTP server: headers and body arrive
 * whole, answers come back as they are (a redirect too: never followed, never turned into a GET),
 * long answers are cut, aborts and refused connections reject, and a kept-alive connection is
 * given up before the server's announced idle timeout ends it.
 */
import type { IncomingMessage } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { httpPost } from '../../lib/deliver/post.ts';
import { standIn } from '../helpers/stand-in.ts';

let base: string;
const seen: { method?: string; headers: IncomingMessage['headers']; body: string }[] = [];

beforeAll(async () => {
  const stand = await standIn((req, body, res) => {
    seen.push({ method: req.method, headers: req.headers, body });
    if (req.url === '/moved') {
      res.writeHead(302, { Location: '/elsewhere' }).end('moved');
    } else if (req.url === '/long') {
      res.writeHead(500).end('x'.repeat(200_000));
    } else if (req.url === '/slow') {
      setTimeout(() => res.writeHead(200).end('late'), 2_000);
    } else {
      res.writeHead(429, { 'Retry-After': '7' }).end('slow down');
    }
  });
  base = stand.url;
});

describe('httpPost', () => {
  it('sends method, headers and the whole body, and hands back status, headers and text', async () => {
    const body = JSON.stringify({ text: 'é'.repeat(10_000) });
    const res = await httpPost(`${base}/hook`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'k1' },
      body,
    });
    expect(res.status).toBe(429);
    expect(res.headers.get('Retry-After')).toBe('7');
    expect(res.headers.get('X-Missing')).toBeNull();
    expect(await res.text()).toBe('slow down');
    const got = seen.at(-1);
    expect(got?.method).toBe('POST');
    expect(got?.headers['idempotency-key']).toBe('k1');
    expect(got?.headers['content-length']).toBe(String(Buffer.byteLength(body)));
    expect(got?.body).toBe(body);
  });

  it('does not follow a redirect: the 302 is the answer, and nothing is sent as a GET', async () => {
    const before = seen.length;
    const res = await httpPost(`${base}/moved`, { method: 'POST', headers: {}, body: '{}' });
    expect(res.status).toBe(302);
    expect(seen.slice(before).map((s) => s.method)).toEqual(['POST']);
  });

  it('keeps the first 64 KiB of a long answer', async () => {
    const res = await httpPost(`${base}/long`, { method: 'POST', headers: {}, body: '' });
    expect(res.status).toBe(500);
    expect((await res.text()).length).toBe(64 * 1024);
  });

  it('rejects on abort, on a refused connection and on a scheme it cannot speak', async () => {
    await expect(
      httpPost(`${base}/slow`, { method: 'POST', headers: {}, body: '{}', signal: AbortSignal.timeout(100) }),
    ).rejects.toThrow();
    await expect(
      httpPost('http://127.0.0.1:9/hook', { method: 'POST', headers: {}, body: '' }),
    ).rejects.toThrow(/ECONNREFUSED/);
    await expect(httpPost('ftp://127.0.0.1/hook', { method: 'POST', headers: {}, body: '' })).rejects.toThrow(
      /unsupported URL scheme ftp:/,
    );
  });

  it("gives up an idle connection before the server's Keep-Alive timeout, so no POST meets its close", async () => {
    // A server closes an idle kept-alive connection after its timeout; a POST written on it at that
    // moment dies with ECONNRESET (a failed attempt, the alert held back by a retry's backoff).
    // Node announces `Keep-Alive: timeout=2` here; the client must drop the socket a second before.
    const ports: number[] = [];
    const idle = await standIn((req, _body, res) => {
      ports.push(req.socket.remotePort as number);
      res.end('ok');
    });
    idle.server.keepAliveTimeout = 2_000;
    const url = `${idle.url}/hook`;
    try {
      const first = await httpPost(url, { method: 'POST', headers: {}, body: '{}' });
      expect(first.headers.get('Keep-Alive')).toBe('timeout=2');
      await first.text();
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect((await httpPost(url, { method: 'POST', headers: {}, body: '{}' })).status).toBe(200);
      // A new connection: the first was given up at 1 s, before the server could end it under a POST.
      expect(ports).toHaveLength(2);
      expect(ports[1]).not.toBe(ports[0]);
    } finally {
      await idle.close();
    }
  });
});
