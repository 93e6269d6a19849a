/**
 * The API's clients as the secret object's `apiClients` names them (docs/api.md): a client name to
 * the SHA-256 hex digest of its token (the first five scopes), or to `{digest, role?, scopes?,
 * tenants?, topLevel?}`; a role is shorthand for scopes; `tenants` and `topLevel` bind the client to
 * those tenants' data. What auth.ts checks tokens against, and what `config validate --secrets`
 * checks: a malformed entry refuses the whole map (naming the client and the key, never the value);
 * a reserved name, or a binding to no tenant of the config, refuses that one client.
 */
import { createHash } from 'node:crypto';
import { ConfigError } from '../errors.ts';
import { SCOPES, type Scope } from './scopes.ts';

export { SCOPES, type Scope } from './scopes.ts';

/** What a client given as a bare digest may do: the first five scopes, never the last three. */
export const BARE_DIGEST_SCOPES: ReadonlySet<Scope> = new Set<Scope>(SCOPES.slice(0, 5));

/** A role is shorthand for a set of scopes (docs/api.md), usable beside or instead of `scopes`. */
export const ROLES = {
  viewer: ['read'],
  responder: ['read', 'lookup', 'events:act', 'silences:write', 'identity:act'],
  admin: [...SCOPES],
} as const satisfies Record<string, readonly Scope[]>;
export type Role = keyof typeof ROLES;

/** A client given by name: its digest, what it may do, and the tenants whose data it is bound to. */
export interface NamedClient {
  digest: string;
  scopes: Scope[];
  /** `tenants` entries by id or name, as the secret gives them; resolved to ids when loaded. */
  tenants?: (number | string)[];
  /** Bound to the top-level sources' data (beside or instead of `tenants`). */
  topLevel?: true;
}

/** Client name to the SHA-256 hex digest of its token (BARE_DIGEST_SCOPES), or to a NamedClient. */
export type ApiClients = Record<string, string | NamedClient>;

/**
 * The data a bound client may see: its tenants' (by id) and, with `topLevel`, the top-level
 * sources'. A client without a binding sees everything.
 */
export interface Binding {
  tenants: ReadonlySet<number>;
  topLevel: boolean;
}

/** Who called, and what it may do. */
export interface ApiCaller {
  name: string;
  scopes: ReadonlySet<Scope>;
  /** Absent: unbound, every tenant's data. */
  binding?: Binding;
}

/** Every scope: an IAM-authenticated caller's (its IAM policy decides what it may call). */
export const ALL_SCOPES: ReadonlySet<Scope> = new Set(SCOPES);

export function sha256Hex(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

const CLIENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}$/;
const HEX_DIGEST = /^[0-9a-fA-F]{64}$/;
/**
 * Names the product gives its own doers (the automatic response, people signed in, Slack users,
 * the CLI, IAM callers, PagerDuty): a client so named could pose as one in the audit trail.
 */
// As section 5 names them, in their case: `Auto` poses as nobody.
const RESERVED = /^(auto$|auto:|sso:|slack:|cli:|iam:|pagerduty:)/;
const ENTRY_KEYS = ['digest', 'scopes', 'role', 'tenants', 'topLevel'];

/** A client the secret names that is refused on its own (401 for it), and why: never its digest. */
export interface RefusedClient {
  name: string;
  why: string;
}

/**
 * The `apiClients` value of the secret object, checked: what it grants, and the clients refused
 * on their own (a reserved name). A malformed map or entry throws, naming the client and the key,
 * never the value. Absent means no client yet (every token is refused until one is added).
 */
export function readApiClients(value: unknown): { clients: ApiClients; refused: RefusedClient[] } {
  if (value === undefined || value === null) return { clients: {}, refused: [] };
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new ConfigError(
      'secret apiClients must be an object of client name to SHA-256 hex digest of its token',
    );
  }
  const problems: string[] = [];
  const clients: ApiClients = {};
  const refused: RefusedClient[] = [];
  const digestHint = `expected the SHA-256 hex digest of the client's token (64 hex characters), e.g. printf %s "$TOKEN" | sha256sum`;
  for (const [name, entry] of Object.entries(value)) {
    if (!CLIENT_NAME.test(name)) {
      problems.push(`apiClients.${name.slice(0, 64)}: a client name is 1 to 64 letters, digits or . _ : @ -`);
      continue;
    }
    let parsed: string | NamedClient | undefined;
    if (typeof entry === 'string') {
      if (HEX_DIGEST.test(entry)) parsed = entry.toLowerCase();
      else problems.push(`apiClients.${name}: ${digestHint}`);
    } else if (entry && typeof entry === 'object' && !Array.isArray(entry)) {
      const problem = namedClientProblem(name, entry as Record<string, unknown>, digestHint);
      if (problem) problems.push(problem);
      else parsed = namedClient(entry as Record<string, unknown>);
    } else {
      problems.push(`apiClients.${name}: ${digestHint}, or {"digest": "...", "scopes": [...]}`);
    }
    if (parsed === undefined) continue;
    if (RESERVED.test(name)) {
      refused.push({
        name,
        why: `the name "${name}" is reserved for the product's own doers (auto, auto:, sso:, slack:, cli:, iam:, pagerduty:); rename the client`,
      });
    } else clients[name] = parsed;
  }
  if (problems.length > 0) throw new ConfigError(problems[0] as string, problems);
  return { clients, refused };
}

/** readApiClients' grants alone (a reserved name left out). */
export function parseApiClients(value: unknown): ApiClients {
  return readApiClients(value).clients;
}

function namedClientProblem(
  name: string,
  entry: Record<string, unknown>,
  digestHint: string,
): string | undefined {
  const unknownKey = Object.keys(entry).find((k) => !ENTRY_KEYS.includes(k));
  if (unknownKey !== undefined)
    return `apiClients.${name}.${unknownKey.slice(0, 64)}: unknown key (expected ${ENTRY_KEYS.join(', ')})`;
  const { digest, scopes, role, tenants, topLevel } = entry;
  if (typeof digest !== 'string' || !HEX_DIGEST.test(digest))
    return `apiClients.${name}.digest: ${digestHint}`;
  if (scopes === undefined && role === undefined)
    return `apiClients.${name}: give "role" (${Object.keys(ROLES).join(', ')}) or "scopes" (${SCOPES.join(', ')})`;
  if (scopes !== undefined) {
    if (!Array.isArray(scopes))
      return `apiClients.${name}.scopes: expected a list of scopes from ${SCOPES.join(', ')}`;
    const bad = scopes.find((x) => !(SCOPES as readonly unknown[]).includes(x));
    if (bad !== undefined)
      return `apiClients.${name}.scopes: ${JSON.stringify(bad).slice(0, 64)} is not a scope (expected ${SCOPES.join(', ')})`;
  }
  if (role !== undefined && !Object.hasOwn(ROLES, role as string))
    return `apiClients.${name}.role: ${JSON.stringify(role).slice(0, 64)} is not a role (expected ${Object.keys(ROLES).join(', ')})`;
  if (
    tenants !== undefined &&
    (!Array.isArray(tenants) ||
      !tenants.every(
        (t) => (Number.isSafeInteger(t) && (t as number) > 0) || (typeof t === 'string' && t !== ''),
      ))
  )
    return `apiClients.${name}.tenants: expected a list of tenants entries' ids or names`;
  if (topLevel !== undefined && typeof topLevel !== 'boolean')
    return `apiClients.${name}.topLevel: expected true or false`;
  return undefined;
}

function namedClient(entry: Record<string, unknown>): NamedClient {
  const { digest, scopes, role, tenants, topLevel } = entry as {
    digest: string;
    scopes?: Scope[];
    role?: Role;
    tenants?: (number | string)[];
    topLevel?: boolean;
  };
  const granted = new Set<Scope>([...(role ? ROLES[role] : []), ...(scopes ?? [])]);
  return {
    digest: digest.toLowerCase(),
    scopes: SCOPES.filter((s) => granted.has(s)),
    ...(tenants !== undefined ? { tenants: [...new Set(tenants)] } : {}),
    ...(topLevel === true ? { topLevel: true } : {}),
  };
}

/** A `tenants` entry as the config names it. */
export interface TenantRef {
  id: number;
  name: string;
}

/**
 * A client's binding with its tenants' names resolved to ids: undefined for an unbound client, or
 * why it is refused (a binding that names no tenant of the config, or is empty with no
 * `topLevel`: fail closed, for that client alone).
 */
export function resolveBinding(
  name: string,
  client: string | NamedClient,
  known: readonly TenantRef[],
): { binding?: Binding; refused?: string } {
  if (typeof client === 'string' || (client.tenants === undefined && client.topLevel === undefined))
    return {};
  const ids = new Set<number>();
  for (const ref of client.tenants ?? []) {
    const found = known.find(
      (t) => t.id === ref || String(t.id) === ref || t.name.toLowerCase() === String(ref).toLowerCase(),
    );
    if (!found) {
      const names = known.map((t) => t.name).join(', ');
      return {
        refused: `apiClients.${name}.tenants: ${JSON.stringify(ref).slice(0, 64)} is no tenant of the alert config (${names ? `its tenants: ${names}` : 'it has none'}); the client is refused until it names one`,
      };
    }
    ids.add(found.id);
  }
  if (ids.size === 0 && client.topLevel !== true)
    return {
      refused: `apiClients.${name}: bound to no data (tenants is empty and topLevel is not true); the client is refused`,
    };
  return { binding: { tenants: ids, topLevel: client.topLevel === true } };
}

/**
 * What `config validate --secrets` says of the secret's `apiClients` against the config's tenants:
 * a malformed entry, a reserved name, a binding to no tenant the config has. Each names the
 * client, never its digest.
 */
export function apiClientProblems(value: unknown, tenants: readonly TenantRef[]): string[] {
  let read: ReturnType<typeof readApiClients>;
  try {
    read = readApiClients(value);
  } catch (error) {
    return error instanceof ConfigError ? [...error.problems] : [(error as Error).message];
  }
  return [
    ...read.refused.map((r) => `apiClients.${r.name}: ${r.why}`),
    ...Object.entries(read.clients).flatMap(([name, client]) => {
      const { refused } = resolveBinding(name, client, tenants);
      return refused ? [refused] : [];
    }),
  ];
}
