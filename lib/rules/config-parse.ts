/**
 * Checking an alert config against its schema (docs/configuration.md): its shape (a strict zod
 * schema) and what a schema cannot check (config-checks.ts), in one pass, every problem named by
 * its path, e.g. `routes[1].match.colour: unknown key`. However many there are: a list too long for
 * zod to report on whole is checked in slices, and a message lists the first 50 and counts the rest.
 *
 * The schema is config.ts's (the whole config), or for a config without `identity`, the same
 * without the identity shape (schema-base.ts): a worker's start reads such a config with this
 * module alone (source.ts), and loads config.ts and the identity schema only for one that has it.
 */

import type * as z from 'zod/mini';
import { DESTINATION_TYPES } from '../destinations/kinds.ts';
import { ConfigError } from '../errors.ts';
import { describeIssues, type ItemIssue } from '../upstream/validate.ts';
import { checkReferences, checkWarnings } from './config-checks.ts';
import { parseJson } from './json.ts';
import type { AlertsConfig } from './schema.ts';
import { baseConfigSchema } from './schema-base.ts';

export interface ConfigCheck {
  config?: AlertsConfig;
  /** Path-precise problems, e.g. `routes[1].match.colour: unknown key`. */
  errors: string[];
  warnings: string[];
}

function line(issue: ItemIssue): string {
  return issue.path ? `${issue.path}: ${issue.message}` : issue.message;
}

/**
 * Validates a parsed config against `schema`; never throws. Every problem is found in one pass:
 * its shape, its references (with `identityReferences`, those of its `identity` keys), then, when
 * it has no problem, its warnings.
 */
export function checkWith(
  input: unknown,
  now: Date,
  schema: z.ZodMiniType,
  identityReferences?: (root: Record<string, unknown>, errors: string[]) => void,
): ConfigCheck {
  const parsed = shapeOf(schema, input);
  const errors = describeIssues(parsed.issues, input, { discriminators: { type: DESTINATION_TYPES } }).map(
    line,
  );
  checkReferences(input, errors);
  if (identityReferences && input !== null && typeof input === 'object' && !Array.isArray(input))
    identityReferences(input as Record<string, unknown>, errors);
  const warnings: string[] = [];
  if (!parsed.config || errors.length) return { errors, warnings };
  checkWarnings(parsed.config, now, warnings);
  return { config: parsed.config, errors, warnings };
}

/**
 * Whether a parsed config has an `identity` key, at the top level or in a tenant: without one, the
 * schema without the identity shape (schema-base.ts) finds the same config and the same problems.
 */
export function hasIdentity(input: unknown): boolean {
  const at = (value: unknown) =>
    value !== null && typeof value === 'object' && (value as { identity?: unknown }).identity !== undefined;
  const tenants = (input as { tenants?: unknown } | null)?.tenants;
  return at(input) || (Array.isArray(tenants) && tenants.some(at));
}

/** A config that has no `identity` key checked without the identity schema (hasIdentity). */
export function checkWithoutIdentity(input: unknown, now: Date = new Date()): ConfigCheck {
  return checkWith(input, now, baseConfigSchema);
}

/** Problems listed in a message, at most; the rest are counted. */
export const LISTED_PROBLEMS = 50;

/**
 * The problems to show: the first LISTED_PROBLEMS, then one line counting the rest (a config of
 * 120,000 bad routes has 240,000, which no one reads past the first screen).
 *
 * @example
 * listedProblems(errors) // ['routes[0].match.colour: unknown key', ..., '… and 239950 more']
 */
export function listedProblems(problems: readonly string[], max = LISTED_PROBLEMS): string[] {
  if (problems.length <= max) return [...problems];
  return [...problems.slice(0, max), `… and ${problems.length - max} more`];
}

/**
 * Entries of a list (or map) checked at once when the whole cannot be: zod gathers the issues under
 * an object's key with one `push(...issues)`, and past about 100,000 issues (200,000 bad routes)
 * that call overflows the stack. A slice that still overflows is cut again, smaller.
 */
const SLICE = 10_000;

/**
 * The schema's verdict: the config, or its issues, however many. (`schema` is configSchema, or,
 * for a config without `identity`, the same without the identity shape: either gives an AlertsConfig.)
 */
function shapeOf(
  schema: z.ZodMiniType,
  input: unknown,
  slice = SLICE,
  first = true,
): { config?: AlertsConfig; issues: z.core.$ZodIssue[] } {
  // A list this long is checked in slices first: if it holds many problems, the check of the whole
  // would only find them to overflow on them (after seconds of work).
  const largest = first ? largestContainer(input) : undefined;
  if (largest && largest.size > slice) {
    const issues = issuesInSlices(schema, input, slice, largest);
    if (issues.length) return { issues };
  }
  try {
    const parsed = schema.safeParse(input);
    return parsed.success
      ? { config: parsed.data as AlertsConfig, issues: [] }
      : { issues: parsed.error.issues };
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return { issues: issuesInSlices(schema, input, slice, largestContainer(input)) };
  }
}

/**
 * The issues of a config too large to check whole: its largest list (or map) is replaced by each
 * of its slices in turn, and each slice's issues are put back at their place (an item's index
 * moved by the slice's start). What lies outside that list is checked with the first slice.
 */
function issuesInSlices(
  schema: z.ZodMiniType,
  input: unknown,
  slice: number,
  largest: Container | undefined,
): z.core.$ZodIssue[] {
  if (!largest || largest.size < 2)
    return [{ code: 'custom', path: [], message: 'too large to check', input } as z.core.$ZodIssue];
  const { path, value } = largest;
  const size = Math.max(1, Math.min(slice, Math.ceil(largest.size / 2)));
  const isArray = Array.isArray(value);
  const entries = isArray ? (value as unknown[]) : Object.entries(value);
  const issues: z.core.$ZodIssue[] = [];
  for (let start = 0; start < entries.length; start += size) {
    const part = entries.slice(start, start + size);
    const piece = isArray ? part : Object.fromEntries(part as [string, unknown][]);
    for (const issue of shapeOf(schema, replaceAt(input, path, piece), Math.ceil(size / 10), false).issues) {
      const inside = issue.path.length > path.length && path.every((key, i) => issue.path[i] === key);
      if (!inside) {
        if (start === 0) issues.push(issue);
      } else if (!isArray) issues.push(issue);
      else {
        const at = [...issue.path];
        at[path.length] = (at[path.length] as number) + start;
        issues.push({ ...issue, path: at });
      }
    }
  }
  return issues;
}

interface Container {
  path: PropertyKey[];
  value: object;
  size: number;
}

/** The list or map with the most entries anywhere in `input`, found without recursion. */
function largestContainer(input: unknown): Container | undefined {
  interface Node {
    value: unknown;
    key?: PropertyKey;
    parent?: Node;
  }
  let best: { node: Node; size: number } | undefined;
  const pending: Node[] = [{ value: input }];
  while (pending.length) {
    const node = pending.pop() as Node;
    const { value } = node;
    if (value === null || typeof value !== 'object') continue;
    const keys: PropertyKey[] = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value);
    if (!best || keys.length > best.size) best = { node, size: keys.length };
    for (const key of keys)
      pending.push({ value: (value as Record<PropertyKey, unknown>)[key], key, parent: node });
  }
  if (!best) return undefined;
  const path: PropertyKey[] = [];
  for (let n: Node | undefined = best.node; n?.parent; n = n.parent) path.unshift(n.key as PropertyKey);
  return { path, value: best.node.value as object, size: best.size };
}

/** `input` with the value at `path` replaced, copying only what lies on the way. */
function replaceAt(input: unknown, path: readonly PropertyKey[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [key, ...rest] = path as [PropertyKey, ...PropertyKey[]];
  const copy = (Array.isArray(input) ? [...input] : { ...(input as object) }) as Record<PropertyKey, unknown>;
  copy[key] = replaceAt(copy[key], rest, value);
  return copy;
}

/** Config text as JSON, or a ConfigError naming `where`. */
export function configJson(text: string, where: string): unknown {
  try {
    return parseJson(text);
  } catch (error) {
    throw new ConfigError(`${where} is not valid JSON: ${(error as Error).message}`);
  }
}

/** The checked config, or a ConfigError naming `where` that lists every problem. */
export function checkedConfig(
  check: ConfigCheck,
  where: string,
): { config: AlertsConfig; warnings: string[] } {
  if (!check.config) {
    throw new ConfigError(
      `${where} is invalid (${check.errors.length} problem${check.errors.length > 1 ? 's' : ''})`,
      listedProblems(check.errors),
    );
  }
  return { config: check.config, warnings: check.warnings };
}
