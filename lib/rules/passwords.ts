/**
 * The password policy (docs/configuration.md, `passwords`), applied in this one place.
 *
 * The policy (`masked`, `hidden`, `clear`) applies to every field of an item that may hold a
 * password, whatever the upstream calls it and at any depth: the spec's `hash` is only the field
 * the spec names, and an item may carry more (a `password` the spec does not list, a `plaintext`
 * in a source, a `password` inside `extra`). The rule, on a field's name split into words (at `_`,
 * `-`, `.`, spaces and camelCase humps) and lower-cased:
 *
 * - A list of passwords: the last word is `passwords`, `hashes`, `passwds` or `pwds`. Its strings
 *   and numbers are secrets; an object in it is a record, walked by these same rules (an
 *   identity's `passwords: [{ hash, ... }]`).
 * - A password: the name is `hash`; or the name, its separators removed, contains `password`,
 *   `passwd`, `passphrase`, `plaintext` or `cleartext`; or one of its words is `pwd` or `pass`.
 *   Every string and number under it, at any depth, is a secret (the upstream's shape there is
 *   not trusted): masked, or the whole field removed under `hidden`.
 * - Not a password: a name whose last word says it describes a password rather than holds one
 *   (`id`, `type`, `at`, `date`, `time`, `count`, `length`, `changed`): `known_password_id`,
 *   `passwordChangedAt`. `hash_type` and `credential_hash` (a digest naming the credential) are
 *   not passwords either: `hash` counts only as the whole name.
 *
 * The upstream's `hash` is a cleartext password whenever `hash_type` is plaintext, unknown or
 * missing, and the type is not trustworthy enough to decide on, so the policy applies to every
 * `hash` whatever its `hash_type`. Masking is idempotent: a masked value masks to itself, so an
 * item that passes through here twice is unchanged the second time.
 *
 * @example
 * applyPasswordPolicy({ hash: 'Summer2024!', password: 'Summer2024!' }, 'masked')
 * // { hash: 'S*********!', password: 'S*********!' }
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

const LIST_WORDS = new Set(['passwords', 'hashes', 'passwds', 'pwds']);
const SECRET_PARTS = ['password', 'passwd', 'passphrase', 'plaintext', 'cleartext'];
const SECRET_WORDS = new Set(['pwd', 'pass']);
const ABOUT_WORDS = new Set(['id', 'type', 'at', 'date', 'time', 'count', 'length', 'changed']);

/**
 * Where a value sits: `none` (ordinary data), `list` (inside a password list: its strings and
 * numbers are secrets, its objects ordinary records), `all` (under a password field: every string
 * and number at any depth is a secret, whatever shape the upstream gave it).
 */
type Zone = 'none' | 'list' | 'all';

/**
 * Zones of the field names met so far: an upstream item has the same few dozen names, read for
 * every credential of every page. Bounded, as the names come from the wild.
 */
const zones = new Map<string, Zone>();
const ZONES_KEPT = 1_000;

/** What a field of this name holds, by the rule in the header. */
export function passwordZone(name: string): Zone {
  let zone = zones.get(name);
  if (zone === undefined) {
    zone = zoneOf(name);
    if (zones.size < ZONES_KEPT) zones.set(name, zone);
  }
  return zone;
}

function zoneOf(name: string): Zone {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[\s_.-]+/)
    .filter(Boolean);
  const last = words.at(-1) ?? '';
  if (LIST_WORDS.has(last)) return 'list';
  if (ABOUT_WORDS.has(last)) return 'none';
  const joined = words.join('');
  if (joined === 'hash') return 'all';
  if (SECRET_PARTS.some((p) => joined.includes(p)) || words.some((w) => SECRET_WORDS.has(w))) return 'all';
  return 'none';
}

/**
 * A copy of `value` with every password in it masked (or removed, `hidden`), by the rule in the
 * header; `clear` returns the input as is. Object keys are kept: they are the upstream's names.
 */
function applyTo(raw: unknown, policy: PasswordPolicy): unknown {
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
      // An object inside a list is a record: its own field names decide, as at the top.
      const inner: Zone = zone === 'all' ? 'all' : passwordZone(key);
      if (inner === 'all' && policy === 'hidden') continue;
      const walked = walk(field, inner);
      // A secret dropped by `hidden` (a bare string under `passwords`) takes its key with it.
      if (walked !== undefined || field === undefined) out[key] = walked;
    }
    return out;
  };
  return walk(raw, 'none');
}

/**
 * Applies the policy to a credential (or any item of the leak store), returning a copy (or the
 * input, for `clear`): `hash`, an extra `password`, and every other password field at any depth.
 */
export function applyPasswordPolicy<T extends object>(credential: T, policy: PasswordPolicy): T {
  return applyTo(credential, policy) as T;
}

/** The policy applied to every record of a legacy identity (`passwords[].hash`). */
export function applyPasswordPolicyToIdentity(identity: Identity, policy: PasswordPolicy): Identity {
  return applyTo(identity, policy) as Identity;
}

/**
 * A copy of a raw upstream item (one that failed validation, so its shape is unknown) with its
 * passwords masked or removed, by the same rule as a valid item: an invalid item is exactly the
 * one whose shape we cannot trust, so under a password field every string and number is masked
 * whatever the nesting (`{hash: ["a", {x: "b"}]}`), and `hidden` removes the whole field.
 */
export function maskRawItem(raw: unknown, policy: PasswordPolicy): unknown {
  return applyTo(raw, policy);
}
