/**
 * DynamoDB's size limits, applied in code and in bytes of UTF-8, as DynamoDB counts them (dynalite
 * counts UTF-16 units instead, so a test against it alone would miss multibyte text):
 * - a partition key at most 2,048 bytes, a sort key (and an index key) at most 1,024;
 * - an item at most 400 KB, every attribute name and value included.
 *
 * Upstream text decides some of our keys (an event's uid) and most of an item's size, so both are
 * made to fit here rather than failing a write, which would stall the stream behind it every run.
 */
import { createHash } from 'node:crypto';

export const PARTITION_KEY_BYTES = 2_048;
export const SORT_KEY_BYTES = 1_024;
/** What an upstream item may take in a record: the rest of the 400 KB is the record's own. */
export const ITEM_BUDGET_BYTES = 350_000;

export const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/**
 * `text` itself when it fits in `limit` bytes; else its start and a digest of the whole, so two
 * long keys that share a start stay distinct. A key that fits is never changed, so records
 * written before this existed are still found.
 *
 * @example
 * fitKey(`dlv#soc#event#${uid}`, PARTITION_KEY_BYTES)
 */
export function fitKey(text: string, limit: number): string {
  if (utf8Bytes(text) <= limit) return text;
  const digest = `~sha256:${createHash('sha256').update(text).digest('hex')}`;
  return `${cutUtf8(text, limit - digest.length)}${digest}`;
}

/**
 * A name of the config's (a destination's) as it appears inside a key or an id: `%`, `~` and `#`,
 * the separators, percent-encoded, so any name is unambiguous. A name of letters, digits, `_` and
 * `-` (all that was allowed before) is unchanged, so its existing keys are still found.
 *
 * @example
 * nameInKey('soc#2') // 'soc%232'
 */
export function nameInKey(name: string): string {
  return name.replace(/[%~#]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

/** The name {@link nameInKey} encoded. */
export function nameFromKey(encoded: string): string {
  return encoded.replace(/%(25|7E|23)/g, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/** The longest start of `text` within `bytes` bytes of UTF-8, never half a character. */
export function cutUtf8(text: string, bytes: number): string {
  if (utf8Bytes(text) <= bytes) return text;
  // Binary search on the UTF-16 length: a character takes 1 to 4 bytes, so the answer is below `bytes`.
  let lo = 0;
  let hi = Math.min(text.length, Math.max(0, bytes));
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (utf8Bytes(text.slice(0, mid)) <= bytes) lo = mid;
    else hi = mid - 1;
  }
  const last = text.charCodeAt(lo - 1);
  return last >= 0xd800 && last <= 0xdbff ? text.slice(0, lo - 1) : text.slice(0, lo);
}

const NOTE = ' …[trimmed]';
/** Strings shorter than this are not worth cutting: they cannot free much, and the note adds some. */
const MIN_CUT_BYTES = 512;

interface Leaf {
  path: string;
  holder: Record<string | number, unknown>;
  key: string | number;
  bytes: number;
}

function jsonBytes(value: unknown): number {
  return utf8Bytes(JSON.stringify(value) ?? 'null');
}

function stringLeaves(value: unknown, path: string, out: Leaf[]): void {
  if (value === null || typeof value !== 'object') return;
  const entries: [string | number, unknown][] = Array.isArray(value)
    ? [...value.entries()]
    : Object.entries(value);
  for (const [key, child] of entries) {
    const at = typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key;
    if (typeof child === 'string') {
      // Cheap upper bound first: only long strings are measured.
      if (child.length * 6 + 2 >= MIN_CUT_BYTES) {
        const bytes = jsonBytes(child);
        if (bytes >= MIN_CUT_BYTES) out.push({ path: at, holder: value as Leaf['holder'], key, bytes });
      }
    } else {
      stringLeaves(child, at, out);
    }
  }
}

function longestList(
  value: unknown,
  path: string,
  best: { path: string; list: unknown[]; bytes: number } | undefined,
) {
  let found = best;
  if (Array.isArray(value)) {
    if (value.length > 1) {
      const bytes = jsonBytes(value);
      if (!found || bytes > found.bytes) found = { path, list: value, bytes };
    }
    value.forEach((child, i) => {
      found = longestList(child, `${path}[${i}]`, found);
    });
  } else if (value !== null && typeof value === 'object') {
    for (const [k, child] of Object.entries(value))
      found = longestList(child, path ? `${path}.${k}` : k, found);
  }
  return found;
}

export type Trimmed<T> = T & { _trimmed?: string[] };

/**
 * An upstream item that fits `budget` bytes of JSON: itself when it does; else a copy with its
 * longest strings cut (then, if need be, its longest lists halved), each cut marked ` …[trimmed]`,
 * and `_trimmed` naming every path cut (docs/destinations/). It still alerts: a huge item is
 * news, and a record that cannot be written would stall its stream.
 */
export function fitItem<T>(item: T, budget: number = ITEM_BUDGET_BYTES): Trimmed<T> {
  if (item === null || typeof item !== 'object' || Array.isArray(item) || jsonBytes(item) <= budget)
    return item as Trimmed<T>;
  const copy = structuredClone(item) as Record<string, unknown>;
  const trimmed: string[] = [];
  // What the item may weigh once `,"_trimmed":[...]` is added to it.
  const room = () => budget - jsonBytes(trimmed) - 16;
  for (let pass = 0; pass < 3; pass++) {
    let size = jsonBytes(copy);
    if (size <= room()) break;
    const leaves: Leaf[] = [];
    stringLeaves(copy, '', leaves);
    leaves.sort((a, b) => b.bytes - a.bytes);
    for (const leaf of leaves) {
      if (size <= room()) break;
      const named = trimmed.includes(leaf.path) ? 0 : jsonBytes(leaf.path) + 1;
      const excess = size - room() + named;
      if (excess <= 0) break;
      const text = leaf.holder[leaf.key] as string;
      // JSON escapes make a string weigh more than its bytes: scale the cut by that ratio.
      const ratio = leaf.bytes / Math.max(1, utf8Bytes(text));
      const keep = Math.max(0, Math.floor((leaf.bytes - excess - jsonBytes(NOTE)) / ratio));
      const shorter = `${cutUtf8(text, keep)}${NOTE}`;
      size -= leaf.bytes - jsonBytes(shorter);
      leaf.holder[leaf.key] = shorter;
      if (named) trimmed.push(leaf.path);
    }
  }
  for (let size = jsonBytes(copy); size > room(); size = jsonBytes(copy)) {
    const longest = longestList(copy, '', undefined);
    if (!longest) break;
    longest.list.length = Math.ceil(longest.list.length / 2);
    if (!trimmed.includes(longest.path)) trimmed.push(longest.path);
  }
  copy._trimmed = trimmed;
  return copy as T & { _trimmed?: string[] };
}
