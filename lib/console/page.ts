/**
 * Answers a request for one of the console's files (routes.ts) from page-packed.ts, with the
 * headers section 13 asks for:
 *
 * - a Content-Security-Policy that allows only this origin's script, style and API, no framing, no
 *   `<base>`, no form submission, and requires Trusted Types with no policy, so no string can ever
 *   become markup or script through a DOM sink (the page builds its DOM from text: page/dom.ts);
 * - `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer`, `X-Frame-Options: DENY`,
 *   and `Cross-Origin-Opener-Policy` / `-Resource-Policy` kept to this origin;
 * - caching: the page is revalidated on every load (`no-cache` with its ETag, a 304 when it has not
 *   changed), the script and stylesheet carry a hash of their content in their names, so a browser
 *   keeps them a year (`immutable`);
 * - the gzipped bytes as they are to a client that takes gzip (every browser), unzipped once for
 *   one that does not.
 */
import { gunzipSync } from 'node:zlib';
import { ApiError } from '../api/errors.ts';
import { PAGE_FILES } from './page-packed.ts';

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ');

const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

const PAGE_CACHE = 'no-cache';
const ASSET_CACHE = 'public, max-age=31536000, immutable';

interface Packed {
  type: string;
  etag: string;
  gzip: Buffer;
  plain?: Buffer;
}

const files = new Map<string, Packed>(
  Object.entries(PAGE_FILES).map(([name, f]) => [name, { ...f, gzip: Buffer.from(f.gzip, 'base64') }]),
);

/** Whether `Accept-Encoding` takes gzip (by name or `*`, with a q above 0). */
export function takesGzip(header: string | null): boolean {
  for (const part of (header ?? '').toLowerCase().split(',')) {
    const [coding = '', ...params] = part.trim().split(';');
    if (coding.trim() !== 'gzip' && coding.trim() !== '*') continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (!q || Number(q.slice(2)) > 0) return true;
  }
  return false;
}

/** Whether `If-None-Match` names this ETag (weak or strong, or `*`). */
function unchanged(header: string | null, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((t) => {
    const tag = t.trim().replace(/^W\//, '');
    return tag === etag || tag === '*';
  });
}

export function pageFile(request: Request, name: string): Response {
  const file = files.get(name);
  if (!file) throw new ApiError('not_found', `the console has no file ${JSON.stringify(name.slice(0, 80))}`);
  const headers: Record<string, string> = {
    ...SECURITY_HEADERS,
    'Cache-Control': name === 'index.html' ? PAGE_CACHE : ASSET_CACHE,
    ETag: file.etag,
    Vary: 'Accept-Encoding',
  };
  if (unchanged(request.headers.get('if-none-match'), file.etag))
    return new Response(null, { status: 304, headers });
  headers['Content-Type'] = file.type;
  if (takesGzip(request.headers.get('accept-encoding'))) {
    headers['Content-Encoding'] = 'gzip';
    return new Response(new Uint8Array(file.gzip), { status: 200, headers });
  }
  file.plain ??= gunzipSync(file.gzip);
  return new Response(new Uint8Array(file.plain), { status: 200, headers });
}
