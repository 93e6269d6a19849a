/**
 * Who is calling: bearer tokens checked against the `apiClients` map of the secret object
 * (api-clients.ts: what each client may do, and the tenants it is bound to). A bare digest has the
 * five scopes every client had before the others existed (BARE_DIGEST_SCOPES); the later ones act
 * on more than alerts (a destination, a person's account), so they are granted only by name.
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
import { type Logger, silentLogger } from '../log.ts';

import {
  type ApiCaller,
  type ApiClients,
  BARE_DIGEST_SCOPES,
  type Binding,
  readApiClients,
  resolveBinding,
  type Scope,
  type TenantRef,
} from './api-clients.ts';

// What the API's clients are, and how the secret names them, live in api-clients.ts.
export * from './api-clients.ts';

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
