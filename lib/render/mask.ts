/**
 * The password policy (interface.md section 3, `passwords`), applied in this one place.
 *
 * The upstream's `hash` is a cleartext password whenever `hash_type` is plaintext, unknown or
 * missing, and the type is not trustworthy enough to decide on, so the policy applies to every
 * `hash` whatever its `hash_type`. Masking is idempotent: a masked value masks to itself, so an
 * item that passes through here twice is unchanged the second time.
 *
 * @example
 * applyPasswordPolicy({ hash: 'Summer2024!' }, 'masked') // { hash: 'S*********!' }
 */
import type { PasswordPolicy } from '../rules/config.ts';
import type { Identity } from '../upstream/schemas.ts';

/** First and last character, a `*` for each one between; values of 1 or 2 characters become all `*`. */
export function maskSecret(value: string): string {
  // Code points, not UTF-16 units: a masked emoji must not leave half a surrogate pair behind.
  const chars = Array.from(value);
  if (chars.length <= 2) return '*'.repeat(chars.length);
  return `${chars[0]}${'*'.repeat(chars.length - 2)}${chars[chars.length - 1]}`;
}

/** Applies the policy to a credential-shaped object's `hash`, returning a copy (or the input, for `clear`). */
export function applyPasswordPolicy<T extends { hash?: unknown }>(credential: T, policy: PasswordPolicy): T {
  if (policy === 'clear') return credential;
  if (policy === 'hidden') {
    const { hash: _removed, ...rest } = credential;
    return rest as T;
  }
  const hash = credential.hash;
  if (hash === undefined || hash === null) return { ...credential };
  // A number or boolean here is off-schema, but it may still be a password: mask its text.
  const text = typeof hash === 'string' ? hash : typeof hash === 'object' ? undefined : String(hash);
  return text === undefined ? { ...credential, hash: '*' } : { ...credential, hash: maskSecret(text) };
}

/** The policy applied to every record of a legacy identity (`passwords[].hash`). */
export function applyPasswordPolicyToIdentity(identity: Identity, policy: PasswordPolicy): Identity {
  if (policy === 'clear') return identity;
  return { ...identity, passwords: identity.passwords.map((p) => applyPasswordPolicy(p, policy)) };
}

/** Field names that may hold a password in a raw item; compared case-insensitively. */
const SECRET_FIELDS = new Set(['hash', 'password', 'passwd', 'pwd']);

function maskValueFor(value: unknown, policy: 'masked' | 'hidden'): { keep: boolean; value?: unknown } {
  if (policy === 'hidden') return { keep: false };
  if (typeof value === 'string') return { keep: true, value: maskSecret(value) };
  if (typeof value === 'number' || typeof value === 'bigint')
    return { keep: true, value: maskSecret(String(value)) };
  return { keep: true, value };
}

/**
 * A copy of a raw upstream item (one that failed validation, so its shape is unknown) with every
 * `hash` / `password` field masked or removed, at any depth (`passwords[].hash` in an identity).
 * `clear` returns the input as is. Objects nested inside a secret field are walked, not dropped.
 */
export function maskRawItem(raw: unknown, policy: PasswordPolicy): unknown {
  if (policy === 'clear') return raw;
  const seen = new WeakSet<object>();
  const walk = (value: unknown): unknown => {
    if (value === null || typeof value !== 'object') return value;
    if (seen.has(value)) return '[circular]';
    seen.add(value);
    if (Array.isArray(value)) return value.map(walk);
    const out: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(value)) {
      if (SECRET_FIELDS.has(key.toLowerCase()) && (field === null || typeof field !== 'object')) {
        const masked = maskValueFor(field, policy);
        if (masked.keep) out[key] = masked.value;
      } else {
        out[key] = walk(field);
      }
    }
    return out;
  };
  return walk(raw);
}
