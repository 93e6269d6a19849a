/**
 * The console's page as the API serves it, without a browser: through `app.request` (serve and
 * npm start) and the Lambda handler, with section 13's headers, caching and size; page-packed.ts
 * is what pack.ts builds from lib/console/page/ today; and `GET /whoami` tells a token its scopes.
 */
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../lib/api/auth.ts';
import { createLambdaHandler } from '../../lib/api/lambda.ts';
import { buildPage } from '../../lib/console/pack.ts';
import { CONTENT_SECURITY_POLICY, takesGzip } from '../../lib/console/page.ts';
import { PAGE_FILES } from '../../lib/console/page-packed.ts';
import { functionUrlEvent } from '../api/function-url.ts';
import { type ApiUnderTest, bearer, buildApi, newToken } from '../api/harness.ts';
import { useEmulator } from '../helpers/emulator.ts';

const emu = useEmulator({ eventsPerTenant: 1, lateMatchesPerTenant: 0, credentials: 0 });
const reader = newToken();
const bare = newToken();
let api: ApiUnderTest;
let handler: ReturnType<typeof createLambdaHandler>;

/** At most 150 KB gzipped for all of it (issue 38). */
const BUDGET_BYTES = 150 * 1024;
const SCRIPT = Object.keys(PAGE_FILES).find((f) => /^app\.[0-9a-f]{12}\.js$/.test(f)) as string;
const STYLE = Object.keys(PAGE_FILES).find((f) => /^app\.[0-9a-f]{12}\.css$/.test(f)) as string;
const plain = (name: string) => gunzipSync(Buffer.from(PAGE_FILES[name]?.gzip ?? '', 'base64'));

beforeAll(() => {
  api = buildApi(emu, {
    clients: { reader: { digest: sha256Hex(reader), scopes: ['read'] }, bare: sha256Hex(bare) },
  });
  handler = createLambdaHandler(api.app);
});

interface Answer {
  status: number;
  headers: Headers;
  bytes: Buffer;
}

async function viaApp(path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await api.app.request(path, { headers });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

async function viaLambda(path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const result = await handler(functionUrlEvent('GET', path, { headers }));
  return {
    status: result.statusCode ?? 0,
    headers: new Headers(result.headers as Record<string, string>),
    bytes: Buffer.from(result.body ?? '', result.isBase64Encoded ? 'base64' : 'utf8'),
  };
}

describe('the packed page', () => {
  it('is what pack.ts builds from lib/console/page/ today (else: npm run console)', async () => {
    const built = await buildPage();
    expect(
      built.map((f) => f.name).sort(),
      'lib/console/page-packed.ts is stale: run npm run console',
    ).toEqual(Object.keys(PAGE_FILES).sort());
    for (const file of built) expect(plain(file.name).equals(file.body), file.name).toBe(true);
  });

  it('is at most 150 KB gzipped in all, and says how much', () => {
    const gzipped = Object.values(PAGE_FILES).reduce(
      (n, f) => n + Buffer.from(f.gzip, 'base64').byteLength,
      0,
    );
    const raw = Object.keys(PAGE_FILES).reduce((n, f) => n + plain(f).byteLength, 0);
    console.info(
      `console page: ${gzipped} bytes gzipped (${raw} bytes unzipped) in ${Object.keys(PAGE_FILES).length} files`,
    );
    expect(gzipped).toBeLessThanOrEqual(BUDGET_BYTES);
  });

  it('has no inline script or style, and loads nothing from another origin', () => {
    const html = plain('index.html').toString('utf8');
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
    expect(scripts).toHaveLength(1);
    expect(scripts[0]?.[1]).toContain(`src="console/${SCRIPT}"`);
    expect(scripts[0]?.[2]).toBe('');
    expect(html).not.toMatch(/<style\b|\sstyle=|\son[a-z]+=/i);
    expect(html).toContain(`<link rel="stylesheet" href="console/${STYLE}">`);
    // Every URL the page names is relative to this origin (or data:, the empty icon).
    for (const [, url] of html.matchAll(/(?:src|href)="([^"]*)"/g))
      expect(url).toMatch(/^(console\/|data:,$)/);
    const code = plain(SCRIPT).toString('utf8');
    expect(code).not.toMatch(/https?:\/\//);
  });

  it('has no HTML sink in its script: text only (innerHTML, outerHTML, insertAdjacentHTML, document.write, eval)', () => {
    const code = plain(SCRIPT).toString('utf8');
    for (const sink of [
      'innerHTML',
      'outerHTML',
      'insertAdjacentHTML',
      'document.write',
      'eval(',
      'new Function',
      'srcdoc',
    ])
      expect(code.includes(sink), sink).toBe(false);
    // The one place text becomes nodes: createTextNode (and textContent).
    expect(code).toContain('createTextNode');
  });
});

describe('GET /console and its files, through both doors', () => {
  const doors = [
    ['app.request', viaApp],
    ['the Lambda handler', viaLambda],
  ] as const;

  it.each(doors)(
    '%s: the page with the CSP, nosniff, no referrer, no-cache and an ETag, gzipped',
    async (_door, get) => {
      const res = await get('/console', { 'Accept-Encoding': 'gzip, deflate, br' });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
      expect(CONTENT_SECURITY_POLICY).toBe(
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'; require-trusted-types-for 'script'; trusted-types 'none'",
      );
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(res.headers.get('etag')).toBe(PAGE_FILES['index.html']?.etag);
      expect(res.headers.get('vary')).toBe('Accept-Encoding');
      expect(res.headers.get('content-encoding')).toBe('gzip');
      expect(gunzipSync(res.bytes).equals(plain('index.html'))).toBe(true);
    },
  );

  it.each(doors)(
    '%s: the script and stylesheet, named by their hash, kept a year; unzipped for a client without gzip',
    async (_door, get) => {
      for (const [name, type] of [
        [SCRIPT, 'text/javascript; charset=utf-8'],
        [STYLE, 'text/css; charset=utf-8'],
      ] as const) {
        const res = await get(`/console/${name}`);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe(type);
        expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
        expect(res.headers.get('content-encoding')).toBeNull();
        expect(res.headers.get('x-content-type-options')).toBe('nosniff');
        expect(res.bytes.equals(plain(name))).toBe(true);
      }
    },
  );

  it.each(doors)(
    '%s: 304 for a page the browser has; JSON 404 for a file the console lacks',
    async (_door, get) => {
      const etag = PAGE_FILES['index.html']?.etag as string;
      const same = await get('/console', { 'If-None-Match': `W/${etag}` });
      expect(same.status).toBe(304);
      expect(same.bytes.byteLength).toBe(0);
      expect(same.headers.get('etag')).toBe(etag);
      expect((await get('/console', { 'If-None-Match': '"older"' })).status).toBe(200);
      const missing = await get('/console/app.js');
      expect(missing.status).toBe(404);
      expect(JSON.parse(missing.bytes.toString('utf8')).error.code).toBe('not_found');
    },
  );

  it('Accept-Encoding: gzip by name or *, never with q=0', () => {
    expect(takesGzip('gzip, deflate, br')).toBe(true);
    expect(takesGzip('br;q=1.0, gzip;q=0.8')).toBe(true);
    expect(takesGzip('*')).toBe(true);
    expect(takesGzip('gzip;q=0')).toBe(false);
    expect(takesGzip('identity')).toBe(false);
    expect(takesGzip(null)).toBe(false);
  });
});

describe('GET /whoami', () => {
  it("names the client and its one grant's scopes, in the API order: a read client, a bare digest", async () => {
    const read = await api.app.request('/whoami', { headers: bearer(reader) });
    expect(await read.json()).toEqual({ name: 'reader', grants: [{ scopes: ['read'] }] });
    const five = await api.app.request('/whoami', { headers: bearer(bare) });
    expect(await five.json()).toEqual({
      name: 'bare',
      grants: [{ scopes: ['assets:write', 'silences:write', 'events:act', 'lookup', 'read'] }],
    });
  });

  it('a token no client holds is 401, with WWW-Authenticate, as every bearer route', async () => {
    const res = await api.app.request('/whoami', { headers: bearer('not-a-token-anyone-has') });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await api.app.request('/whoami')).status).toBe(401);
  });
});
