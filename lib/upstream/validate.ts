/**
 * Item-by-item validation: a page is split into the items that fit their schema and the ones that
 * do not, each of the latter with the fields it broke named, so a caller can quarantine one bad
 * item and still process the rest of its page.
 */
import type * as z from 'zod/mini';

export interface ItemIssue {
  /** Dotted path of the field, e.g. `metadata.severity` or `identifiers[0].id`; empty for the item itself. */
  path: string;
  message: string;
}

export interface InvalidItem {
  /** Position of the item in its page. */
  index: number;
  /** The item's key (`metadata.uid` or `id`) when it could be read. */
  key?: string;
  issues: ItemIssue[];
  /** The item as received. It may hold a password: mask it before storing or logging it. */
  raw: unknown;
}

export interface SplitItems<T> {
  items: T[];
  invalid: InvalidItem[];
}

export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = root;
  for (const part of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[part];
  }
  return cur;
}

function describeValue(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number' && !Number.isInteger(value)) return 'a fractional number';
  return `a ${typeof value}`;
}

/** `an integer`, `a string`: how a zod type name reads in a sentence. */
function typeName(expected: string): string {
  if (expected === 'int') return 'an integer';
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}

/** `info, low, medium`: listed values, strings without quotes when none of them needs them. */
function listValues(values: readonly unknown[]): string {
  const bare = values.every((v) => typeof v === 'string' && /^[\w.:-]+$/.test(v));
  return values.map((v) => (bare ? String(v) : JSON.stringify(v))).join(', ');
}

export interface DescribeOptions {
  /** The values a discriminated union accepts, by discriminator key (`type`: slack, email, ...). */
  discriminators?: Record<string, readonly string[]>;
}

/**
 * The issues of the union branch the author most likely meant: among the branches whose value has
 * the right type at the union's own path, the one with the fewest problems. None: undefined.
 */
function likelyBranch(issue: z.core.$ZodIssueInvalidUnion): z.core.$ZodIssue[] | undefined {
  const fitting = (issue.errors ?? []).filter(
    (branch) => !branch.some((i) => i.path.length === 0 && i.code === 'invalid_type'),
  );
  fitting.sort((a, b) => a.length - b.length);
  return fitting[0]?.map((i) => ({ ...i, path: [...issue.path, ...i.path] }) as z.core.$ZodIssue);
}

/** Human messages for zod issues; zod/mini ships no locale, and ours name the field and what it held. */
export function describeIssues(
  issues: readonly z.core.$ZodIssue[],
  input: unknown,
  options: DescribeOptions = {},
): ItemIssue[] {
  return issues.flatMap((issue): ItemIssue[] => {
    if (issue.code === 'unrecognized_keys') {
      // One line per key, with the key in the path: `routes[1].match.colour: unknown key`.
      return issue.keys.map((key) => ({ path: formatPath([...issue.path, key]), message: 'unknown key' }));
    }
    if (issue.code === 'invalid_union') {
      const branch = likelyBranch(issue);
      if (branch?.length) return describeIssues(branch, input, options);
    }
    const path = formatPath(issue.path);
    const value = valueAt(input, issue.path);
    const got = describeValue(value);
    let message: string;
    switch (issue.code) {
      case 'invalid_type':
        message = `expected ${typeName(issue.expected)}, got ${got}`;
        break;
      case 'invalid_value':
        message = `expected one of ${listValues(issue.values)}, got ${JSON.stringify(value) ?? 'nothing'}`;
        break;
      case 'too_small':
        message =
          issue.origin === 'string'
            ? `expected at least ${issue.minimum} character${Number(issue.minimum) === 1 ? '' : 's'}`
            : issue.origin === 'array'
              ? `expected at least ${issue.minimum} item${Number(issue.minimum) === 1 ? '' : 's'}`
              : `expected at least ${issue.minimum}`;
        break;
      case 'too_big':
        message =
          issue.origin === 'string'
            ? `expected at most ${issue.maximum} characters`
            : issue.origin === 'array'
              ? `expected at most ${issue.maximum} items`
              : `expected at most ${issue.maximum}`;
        break;
      case 'invalid_union': {
        const key = issue.path.at(-1);
        const allowed =
          ('options' in issue && issue.options?.length ? issue.options : undefined) ??
          (typeof key === 'string' ? options.discriminators?.[key] : undefined);
        if (allowed && issue.errors.length === 0) {
          message = `expected one of ${listValues(allowed)}, got ${JSON.stringify(value) ?? 'nothing'}`;
          break;
        }
        const expected = [
          ...new Set(
            (issue.errors ?? []).flatMap((branch) =>
              branch.flatMap((i) => (i.path.length === 0 && i.code === 'invalid_type' ? [i.expected] : [])),
            ),
          ),
        ];
        message = expected.length
          ? `expected ${expected.map(typeName).join(' or ')}, got ${got}`
          : `expected ${got === 'missing' ? 'a value' : 'a different value'}, got ${got}`;
        break;
      }
      default:
        message =
          issue.message && issue.message !== 'Invalid input' ? issue.message : `invalid value (${got})`;
    }
    return [{ path, message }];
  });
}

/** One line naming every broken field, e.g. `metadata.severity: expected one of ...; id: expected int, got a string`. */
export function issuesToText(issues: readonly ItemIssue[]): string {
  return issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ');
}

export function splitValid<T>(
  schema: z.ZodMiniType<T>,
  raw: readonly unknown[],
  keyOf?: (item: unknown) => string | undefined,
): SplitItems<T> {
  const items: T[] = [];
  const invalid: InvalidItem[] = [];
  raw.forEach((candidate, index) => {
    const result = schema.safeParse(candidate);
    if (result.success) {
      items.push(result.data);
    } else {
      const key = keyOf?.(candidate);
      invalid.push({
        index,
        ...(key === undefined ? {} : { key }),
        issues: describeIssues(result.error.issues, candidate),
        raw: candidate,
      });
    }
  });
  return { items, invalid };
}

/** Reads `metadata.uid` of an event-shaped value, if it is a string. */
export function eventKeyOf(item: unknown): string | undefined {
  const uid = (item as { metadata?: { uid?: unknown } } | null)?.metadata?.uid;
  return typeof uid === 'string' ? uid : undefined;
}

/** Reads `id` of a credential-shaped value, if it is a number or string. */
export function credentialKeyOf(item: unknown): string | undefined {
  const id = (item as { id?: unknown } | null)?.id;
  return typeof id === 'number' || typeof id === 'string' ? String(id) : undefined;
}
