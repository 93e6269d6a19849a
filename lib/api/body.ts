/**
 * Reading a request body safely: the content type first (415), then the size (413), counted on
 * the bytes actually read and not only on `Content-Length`, which a chunked request does not send.
 * Reading stops at the limit, so an oversized body is never held in memory. Every body the API
 * reads goes through `readBounded` (the JSON routes here, Slack's form in slack.ts).
 */
import { ApiError } from './errors.ts';

/** True for `application/json`, with or without parameters such as `charset=utf-8`. */
export function isJsonContentType(header: string | null | undefined): boolean {
  if (!header) return false;
  return header.split(';')[0]?.trim().toLowerCase() === 'application/json';
}

function tooLarge(maxBytes: number): ApiError {
  return new ApiError(
    'payload_too_large',
    `the body is larger than ${maxBytes} bytes (${maxBytes / 1024} KiB)`,
  );
}

/**
 * The body's bytes, at most `maxBytes` of them: a larger declared `Content-Length` is refused
 * before anything is read, and a body that runs past the bound (chunked, or longer than it said)
 * is refused as soon as it does, its reader cancelled, the rest never read into memory.
 */
export async function readBounded(request: Request, maxBytes: number): Promise<Uint8Array> {
  const declared = request.headers.get('content-length');
  if (declared !== null && /^\d+$/.test(declared.trim()) && Number(declared) > maxBytes)
    throw tooLarge(maxBytes);
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/** The body as text, after the content type and size checks. */
export async function readJsonText(request: Request, maxBytes: number): Promise<string> {
  if (!isJsonContentType(request.headers.get('content-type'))) {
    throw new ApiError('unsupported_media_type', 'send the body as Content-Type: application/json');
  }
  const bytes = await readBounded(request, maxBytes);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new ApiError('invalid_request', 'the body is not valid UTF-8');
  }
}
