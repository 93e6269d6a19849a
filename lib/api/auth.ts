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

/**
 * Client name to the SHA-256 hex digest of its token (BARE_DIGEST_SCOPES), or to `{digest, scopes}`.
 */
export type ApiClients = Record<string, string | { digest: string; scopes: Scope[] }>;

/** Who called, and what it may do. */
export interface ApiCaller {
  name: string;
  scopes: ReadonlySet<Scope>;
}

/** Every scope: an IAM-authenticated caller's (its IAM policy decides what it may call). */
export const ALL_SCOPES: ReadonlySet<Scope> = new Set(SCOPES);

export function sha256Hex(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

const CLIENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}$/;
const HEX_DIGEST = /^[0-9a-fA-F]{64}$/;

/**
 * The `apiClients` value of the secret object, checked. Absent means no client yet (every token
 * is refused until one is added). Error messages name the client, never the value.
 */
export function parseApiClients(value: unknown): ApiClients {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new ConfigError(
      'secret apiClients must be an object of client name to SHA-256 hex digest of its token',
    );
  }
  const problems: string[] = [];
  const clients: ApiClients = {};
  const digestHint = `expected the SHA-256 hex digest of the client's token (64 hex characters), e.g. printf %s "$TOKEN" | sha256sum`;
  for (const [name, entry] of Object.entries(value)) {
    if (!CLIENT_NAME.test(name)) {
      problems.push(`apiClients.${name.slice(0, 64)}: a client name is 1 to 64 letters, digits or . _ : @ -`);
    } else if (typeof entry === 'string') {
      if (HEX_DIGEST.test(entry)) clients[name] = entry.toLowerCase();
      else problems.push(`apiClients.${name}: ${digestHint}`);
    } else if (entry && typeof entry === 'object' && !Array.isArray(entry)) {
      const { digest, scopes, ...extra } = entry as { digest?: unknown; scopes?: unknown };
      const unknownKey = Object.keys(extra)[0];
      const badScope = Array.isArray(scopes)
        ? scopes.find((x) => !(SCOPES as readonly unknown[]).includes(x))
        : undefined;
      if (unknownKey !== undefined)
        problems.push(
          `apiClients.${name}.${unknownKey.slice(0, 64)}: unknown key (expected digest and scopes)`,
        );
      else if (typeof digest !== 'string' || !HEX_DIGEST.test(digest))
        problems.push(`apiClients.${name}.digest: ${digestHint}`);
      else if (!Array.isArray(scopes))
        problems.push(`apiClients.${name}.scopes: expected a list of scopes from ${SCOPES.join(', ')}`);
      else if (badScope !== undefined)
        problems.push(
          `apiClients.${name}.scopes: ${JSON.stringify(badScope).slice(0, 64)} is not a scope (expected ${SCOPES.join(', ')})`,
        );
      else clients[name] = { digest: digest.toLowerCase(), scopes: [...new Set(scopes as Scope[])] };
    } else {
      problems.push(`apiClients.${name}: ${digestHint}, or {"digest": "...", "scopes": [...]}`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems[0] as string, problems);
  return clients;
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
      if (timingSafeEqual(entry.digest, digest) && found === undefined)
        found = { name: entry.name, scopes: entry.scopes };
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
      const clients = parseApiClients(await this.options.load());
      this.entries = Object.entries(clients).map(([name, entry]) =>
        typeof entry === 'string'
          ? { name, digest: Buffer.from(entry, 'hex'), scopes: BARE_DIGEST_SCOPES }
          : { name, digest: Buffer.from(entry.digest, 'hex'), scopes: new Set(entry.scopes) },
      );
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
