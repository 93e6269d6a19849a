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

import type { Identity } from '../upstream/schemas.ts';
import type { PasswordPolicy } from './config.ts';

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
/**
 * Field names that may hold a list of passwords: strings in it are secrets, but an object in it
 * is a record whose other fields (ids, dates, a source's `credential_hash`) are not, so it is
 * walked like any object. An identity's `passwords: [{ hash, ... }]` is the usual shape.
 */
const SECRET_LISTS = new Set(['passwords', 'hashes']);

/**
 * Where a value sits: `none` (ordinary data), `list` (inside a password list: its strings and
 * numbers are secrets, its objects ordinary records), `all` (under a password field: every string
 * and number at any depth is a secret, whatever shape the upstream gave it).
 */
type Zone = 'none' | 'list' | 'all';

/**
 * A copy of a raw upstream item (one that failed validation, so its shape is unknown) with every
 * `hash` / `password` field masked or removed, at any depth (`passwords[].hash` in an identity).
 * Under such a field, every string and number is masked whatever the nesting (`{hash: ["a",
 * {x: "b"}]}`), since an invalid item is exactly the one whose shape we cannot trust; `hidden`
 * removes the whole field. Object keys are kept: they are the upstream's field names.
 * `clear` returns the input as is.
 */
export function maskRawItem(raw: unknown, policy: PasswordPolicy): unknown {
  if (policy === 'clear') return raw;
  const seen = new WeakSet<object>();
  // `undefined` means "drop this value" (hidden policy, a secret inside a list).
  const walk = (value: unknown, zone: Zone): unknown => {
    if (value === null || typeof value === 'boolean' || value === undefined) return value;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint') {
      if (zone === 'none') return value;
      return policy === 'hidden' ? undefined : maskSecret(String(value));
    }
    if (typeof value !== 'object') return zone === 'none' ? value : undefined;
    if (seen.has(value)) return '[circular]';
    seen.add(value);
    if (Array.isArray(value)) {
      const out = value.map((v) => walk(v, zone));
      return zone === 'none' ? out : out.filter((v) => v !== undefined);
    }
    const out: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(value)) {
      const name = key.toLowerCase();
      // An object inside a list is a record: its own field names decide, as at the top.
      const inner: Zone =
        zone === 'all' || SECRET_FIELDS.has(name) ? 'all' : SECRET_LISTS.has(name) ? 'list' : 'none';
      if (inner === 'all' && policy === 'hidden') continue;
      const walked = walk(field, inner);
      // A secret dropped by `hidden` (a bare string under `passwords`) takes its key with it.
      if (walked !== undefined || field === undefined) out[key] = walked;
    }
    return out;
  };
  return walk(raw, 'none');
}
