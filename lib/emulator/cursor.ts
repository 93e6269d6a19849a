/**
 * Opaque paging cursors: a position, the fingerprint of the request it belongs to, and the tenant,
 * signed with a key private to this emulator instance. Guessing or editing one gets a 400, as does
 * reusing one with a different request or after the emulator restarted, the way a real service's
 * cursors expire.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export interface CursorPayload {
  /** Endpoint name. */
  e: string;
  /** Tenant id. */
  t: number;
  /** Fingerprint of the request without `from` and `size`. */
  f: string;
  /** Position: the last seq or id already returned. */
  p: number;
}

export class CursorCodec {
  private key: Buffer;

  constructor(
    private readonly seed: string | number,
    instance: string = randomBytes(8).toString('hex'),
  ) {
    this.key = createHash('sha256').update(`cursor:${seed}:${instance}`).digest();
  }

  /**
   * Every cursor issued so far is refused from now on, as when a real service's cursors expire.
   * Returns the new instance, to be kept where the old one was.
   */
  expire(instance: string = randomBytes(8).toString('hex')): string {
    this.key = createHash('sha256').update(`cursor:${this.seed}:${instance}`).digest();
    return instance;
  }

  encode(payload: CursorPayload): string {
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${body}.${this.sign(body)}`;
  }

  /** The payload, or undefined when the cursor is malformed, forged or from another instance. */
  decode(cursor: string): CursorPayload | undefined {
    const [body, signature, extra] = cursor.split('.');
    if (!body || !signature || extra !== undefined) return undefined;
    const expected = Buffer.from(this.sign(body));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    try {
      const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as CursorPayload;
      return typeof payload.p === 'number' && typeof payload.f === 'string' ? payload : undefined;
    } catch {
      return undefined;
    }
  }

  private sign(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url').slice(0, 22);
  }
}

/** Stable fingerprint of a JSON value (object keys sorted). */
export function fingerprint(value: unknown): string {
  const canonical = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(canonical);
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.keys(v as object)
          .sort()
          .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
      );
    }
    return v;
  };
  return createHash('sha256')
    .update(JSON.stringify(canonical(value)) ?? '')
    .digest('hex')
    .slice(0, 16);
}
