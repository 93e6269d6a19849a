/**
 * The delivery POST (lib/deliver/post.ts) against a real local HTTP server: headers and body arrive
 * whole, answers come back as they are (a redirect too: never followed, never turned into a GET),
 * long answers are cut, and aborts and refused connections reject.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpPost } from '../../lib/deliver/post.ts';

let server: Server;
let base: string;
const seen: { method?: string; headers: IncomingMessage['headers']; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
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
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
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
});
