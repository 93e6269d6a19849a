/**
 * Who is calling: bearer tokens checked against the `apiClients` map of the secret object (client
 * name to the SHA-256 hex digest of its token, or to `{digest, scopes}`, which may do what its
 * scopes say). A bare digest has the five scopes every client had before the others existed
 * (BARE_DIGEST_SCOPES); `destinations:write`, `identity:act` and `identity:disable` act on more
 * than alerts (a destination, a person's account), so they are granted only by name.
 *
 * Digests are cached. A token that matches none triggers a re-read of the secret, at most once per
 * `reloadIntervalMs` (default a minute), so a client added to the secret is accepted within a
 * minute while a flood of wrong tokens costs at most one Secrets Manager call a minute. The cache
 * is also refreshed once it is older than `maxAgeMs` (default 5 minutes), so a client removed from
 * the secret stops being accepted within that time. Every comparison is constant-time and runs
 * against every digest: neither the position nor the name of a match shows in the timing.
 *
 * @example
 * const auth = new ApiClientAuth({ load: async () => ({ runbook: sha256Hex('s3cret-token') }) });
 * await auth.authenticate('s3cret-token'); // 'runbook'
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { ConfigError } from '../errors.ts';
import { type Logger, silentLogger } from '../log.ts';

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
const RESERVED = /^(auto$|auto:|sso:|slack:|cli:|iam:|pagerduty:)/i;
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

/** The token of an `Authorization` header: missing, malformed, or the token itself. */
export type BearerToken = { kind: 'missing' } | { kind: 'malformed' } | { kind: 'token'; token: string };

// RFC 6750 b64token, with a generous length cap so a huge header cannot cost a big hash.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]{1,4096}=*) *$/i;

export function parseBearer(header: string | undefined): BearerToken {
  if (header === undefined || header.trim() === '') return { kind: 'missing' };
  const match = BEARER.exec(header);
  return match ? { kind: 'token', token: match[1] as string } : { kind: 'malformed' };
}

export interface ApiClientAuthOptions {
  /** Reads `apiClients` afresh (Secrets Manager or SECRETS_FILE). */
  load: () => Promise<ApiClients>;
  /**
   * The config's tenants, by id and name, that bound clients' names resolve to when the clients
   * are read; none given: a binding naming a tenant refuses its client.
   */
  tenants?: () => Promise<readonly TenantRef[]>;
  now?: () => number;
  logger?: Logger;
  /** Least time between two re-reads caused by unknown tokens; default 60 s. */
  reloadIntervalMs?: number;
  /** Age after which the cache is re-read on the next request; default 5 minutes. */
  maxAgeMs?: number;
}

interface Entry {
  name: string;
  digest: Buffer;
  scopes: ReadonlySet<Scope>;
  binding?: Binding;
  /** Refused on its own (a reserved name, a binding to nothing): its token is 401. */
  refused?: true;
}

export class ApiClientAuth {
  private entries: Entry[] | undefined;
  private loadedAt = Number.NEGATIVE_INFINITY;
  private attemptedAt = Number.NEGATIVE_INFINITY;
  private inflight: Promise<void> | undefined;
  private readonly now: () => number;
  private readonly logger: Logger;
  private readonly reloadIntervalMs: number;
  private readonly maxAgeMs: number;
  /** How many times the secret was read (tests assert that a flood of wrong tokens does not raise it). */
  loads = 0;

  constructor(private readonly options: ApiClientAuthOptions) {
    this.now = options.now ?? Date.now;
    this.logger = options.logger ?? silentLogger;
    this.reloadIntervalMs = options.reloadIntervalMs ?? 60_000;
    this.maxAgeMs = options.maxAgeMs ?? 5 * 60_000;
  }

  /** The client's name, or undefined when the token belongs to no client. */
  async authenticate(token: string): Promise<string | undefined> {
    return (await this.identify(token))?.name;
  }

  /** The client and its scopes, or undefined when the token belongs to no client. */
  async identify(token: string): Promise<ApiCaller | undefined> {
    const digest = createHash('sha256').update(token, 'utf8').digest();
    if (this.entries === undefined) {
      // Nothing to fall back on: a failure here is the caller's 500, not a silent 401 for everyone.
      // Still at most one read per interval, so an unreadable secret is not hammered either; a
      // read under way (the first requests of a cold start, at once) is shared, not refused.
      if (!this.inflight && !this.mayReload())
        throw new Error('the API clients could not be read; retrying within a minute');
      await this.reload(true);
    } else if (this.now() - this.loadedAt >= this.maxAgeMs && this.mayReload()) {
      await this.reload(false);
    }
    const found = this.match(digest);
    if (found !== undefined || !this.mayReload()) return found;
    await this.reload(false);
    return this.match(digest);
  }

  private mayReload(): boolean {
    return this.now() - this.attemptedAt >= this.reloadIntervalMs;
  }

  private match(digest: Buffer): ApiCaller | undefined {
    let found: ApiCaller | undefined;
    for (const entry of this.entries ?? []) {
      // No early exit: every digest is compared whether or not an earlier one matched.
      if (timingSafeEqual(entry.digest, digest) && found === undefined && !entry.refused)
        found = {
          name: entry.name,
          scopes: entry.scopes,
          ...(entry.binding ? { binding: entry.binding } : {}),
        };
    }
    return found;
  }

  /** One read at a time; concurrent callers share it. */
  private reload(mustSucceed: boolean): Promise<void> {
    this.inflight ??= this.read().finally(() => {
      this.inflight = undefined;
    });
    return mustSucceed ? this.inflight : this.inflight.catch(() => undefined);
  }

  private async read(): Promise<void> {
    this.attemptedAt = this.now();
    this.loads += 1;
    try {
      const { clients, refused } = readApiClients(await this.options.load());
      const bound = Object.values(clients).some((c) => typeof c !== 'string' && (c.tenants || c.topLevel));
      const known = bound ? ((await this.options.tenants?.()) ?? []) : [];
      const entries: Entry[] = [];
      for (const [name, entry] of Object.entries(clients)) {
        if (typeof entry === 'string') {
          entries.push({ name, digest: Buffer.from(entry, 'hex'), scopes: BARE_DIGEST_SCOPES });
          continue;
        }
        const { binding, refused: why } = resolveBinding(name, entry, known);
        if (why) refused.push({ name, why });
        entries.push({
          name,
          digest: Buffer.from(entry.digest, 'hex'),
          scopes: new Set(entry.scopes),
          ...(binding ? { binding } : {}),
          ...(why ? { refused: true as const } : {}),
        });
      }
      // A refused client's digest is still compared (the timing says nothing of which matched).
      this.entries = entries;
      for (const { name, why } of refused)
        this.logger.warn(`API client "${name}" refused: ${why}`, { client: name });
      this.loadedAt = this.now();
      if (this.entries.length === 0) {
        this.logger.warn(
          'no API clients are configured (secret apiClients is empty); every token is refused',
        );
      }
    } catch (error) {
      // Keep serving the digests we have; the next re-read is at most one interval away.
      this.logger.error('could not read the API clients from the secret object', { error });
      throw error;
    }
  }
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
