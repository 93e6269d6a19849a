/**
 * Text from outside as JavaScript holds it: a lone UTF-16 surrogate (half of a pair, from a JSON
 * `\ud800` escape) is not text any encoder will write, and a strict JSON parser at a destination
 * may answer 400 to one, making the delivery dead. It becomes U+FFFD, the replacement character.
 */

// A high surrogate without its low half, or a low one without its high half.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
// The same, for a test: a global regex's test() would keep its lastIndex between strings.
const HAS_LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * `text` with every lone surrogate replaced by U+FFFD; pairs are left as they are.
 *
 * @example
 * wellFormed('a\ud800b') // 'a\ufffdb'
 */
export function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, '\ufffd');
}

/** A JSON `\uD800`-style escape of a surrogate: only then can parsed text hold a lone one. */
const ESCAPED_SURROGATE = /\\u[dD][89a-fA-F][0-9a-fA-F]{2}/;

/**
 * JSON.parse, with every string value made well-formed when the text escapes a surrogate at all
 * (raw bytes cannot carry a lone one: they decode to U+FFFD already), so the common case pays
 * nothing.
 */
export function parseWellFormed(text: string): unknown {
  if (!ESCAPED_SURROGATE.test(text)) return JSON.parse(text);
  return JSON.parse(text, (_key, value: unknown) => (typeof value === 'string' ? wellFormed(value) : value));
}

/**
 * `value` with every string in it made well-formed; the same object when there was nothing to
 * change, so items the client already cleaned (all of them, in production) cost a walk and no copy.
 */
export function wellFormedDeep<T>(value: T): T {
  if (typeof value === 'string') return (HAS_LONE_SURROGATE.test(value) ? wellFormed(value) : value) as T;
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((v) => {
      const w = wellFormedDeep(v);
      if (w !== v) changed = true;
      return w;
    });
    return (changed ? out : value) as T;
  }
  if (value && typeof value === 'object') {
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const w = wellFormedDeep(v);
      if (w !== v) changed = true;
      out[k] = w;
    }
    return (changed ? out : value) as T;
  }
  return value;
}
