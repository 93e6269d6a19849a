/**
 * Reading a JSON request body safely: the content type first (415), then the size (413), counted
 * on the bytes actually read and not only on `Content-Length`, which a chunked request does not
 * send. Reading stops at the limit, so an oversized body is never held in memory.
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

/** The body as text, after the content type and size checks. */
export async function readJsonText(request: Request, maxBytes: number): Promise<string> {
  if (!isJsonContentType(request.headers.get('content-type'))) {
    throw new ApiError('unsupported_media_type', 'send the body as Content-Type: application/json');
  }
  const declared = request.headers.get('content-length');
  if (declared !== null && /^\d+$/.test(declared.trim()) && Number(declared) > maxBytes)
    throw tooLarge(maxBytes);
  if (request.body === null) return '';
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
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new ApiError('invalid_request', 'the body is not valid UTF-8');
  }
}
