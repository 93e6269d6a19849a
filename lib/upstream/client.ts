/**
 * A typed client for the eleven endpoints of the upstream spec (docs/architecture.md), plus the token
 * exchange (auth.ts).
 *
 * Each method checks the spec's limits before sending, validates the response, and returns pages
 * whose items are split into valid ones and invalid ones (validate.ts), so one odd item never
 * costs its page. Paged endpoints also have `...Pages` iterators (paging.ts).
 *
 * Longer than 300 lines on purpose: one method per endpoint of the spec, each next to its own
 * limits; split up, the contract would be scattered over files that each hold a few endpoints.
 */

import type { Logger } from '../log.ts';
import { silentLogger } from '../log.ts';
import type { TokenProvider } from './auth.ts';
import { RequestLimitError, UpstreamError } from './errors.ts';
import type { CallOptions, QueryValue, RawResponse, RequestSpec, UpstreamHttpOptions } from './http.ts';
import { UpstreamHttp } from './http.ts';
import type { Fetched } from './paging.ts';
import { pagesById, pagesByNext } from './paging.ts';
import { SEARCH_TIER_ENDPOINTS } from './rate.ts';
import type {
  CredentialSearchBody,
  EventActionBatch,
  EventActionType,
  EventSearchBody,
  IdentityPage,
  LegacySearchPage,
  LegacySearchParams,
  Page,
  Quota,
  QuotaPage,
} from './requests.ts';
import { EVENT_ACTIONS } from './requests.ts';
import {
  type Asset,
  assetResponseSchema,
  type Credential,
  credentialSchema,
  type EventItem,
  eventItemSchema,
  type Identity,
  identitiesByAccountSchema,
  identityArraySchema,
  identitySchema,
  legacySearchEnvelopeSchema,
  legacySearchItemSchema,
  nextPageEnvelopeSchema,
  type TokenInfo,
  tokenInfoSchema,
  type V2Credential,
  v2CredentialSchema,
} from './schemas.ts';
import type { InvalidItem, SplitItems } from './validate.ts';
import { credentialKeyOf, describeIssues, eventKeyOf, issuesToText, splitValid } from './validate.ts';
import { upstreamCode } from './wire.ts';

export type * from './requests.ts';
export { EVENT_ACTIONS } from './requests.ts';

export const LIMITS = {
  tenantEventsSize: 10,
  globalCredentialsSize: 10_000,
  byPasswordSize: 10_000,
  v2CredentialsSize: 5_000,
  byAccountsBatch: 100,
  eventActionTargets: 10,
} as const;

export interface UpstreamClientOptions extends UpstreamHttpOptions {
  /** Receives the quota headers of every global search response. */
  onQuota?: (quota: Quota, endpoint: string) => void;
}

const deprecationWarned = new Set<string>();

/** Forget which deprecation warnings were printed (tests). */
export function resetDeprecationWarnings(): void {
  deprecationWarned.clear();
}

function checkSize(endpoint: string, size: number | undefined, min: number, max: number): void {
  if (size === undefined) return;
  if (!Number.isInteger(size) || size < min || size > max) {
    throw new RequestLimitError(
      endpoint,
      `${endpoint}: size must be an integer from ${min} to ${max}, got ${size}`,
    );
  }
}

function checkPositiveId(endpoint: string, name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new RequestLimitError(endpoint, `${endpoint}: ${name} must be a positive integer, got ${value}`);
  }
}

function checkSegment(endpoint: string, name: string, value: string): void {
  if (typeof value !== 'string' || value.length === 0) {
    throw new RequestLimitError(endpoint, `${endpoint}: ${name} must be a non-empty string`);
  }
}

/**
 * A value as one path segment: percent-encoded, and refused when empty or a dot segment (`.`,
 * `..`), which the URL parser resolves to another path (`by_domain/..` would be
 * `/leaksdb/identities/`). Encoding leaves no other way out: `/`, `\`, `?`, `#` and `%` are escaped,
 * so no `%2e` form of a dot segment can come out of it. The value is not echoed: it may be a password.
 */
function pathSegment(endpoint: string, name: string, value: string): string {
  checkSegment(endpoint, name, value);
  if (value === '.' || value === '..')
    throw new RequestLimitError(endpoint, `${endpoint}: ${name} cannot be . or .. (a path of its own)`);
  return encodeURIComponent(value);
}

function readQuota(headers: Headers): Quota {
  const remaining = headers.get('x-flare-global-searches-remaining');
  const reached = headers.get('x-flare-global-searches-batch-reached');
  const n = remaining === null ? Number.NaN : Number(remaining);
  return {
    remaining: Number.isFinite(n) ? n : null,
    batchReached: reached === null ? null : /^(true|1|yes)$/i.test(reached.trim()),
  };
}

function invalidResponse(endpoint: string, detail: string): UpstreamError {
  return new UpstreamError('invalid_response', `${endpoint}: unexpected response shape (${detail})`, {
    endpoint,
  });
}

function normaliseNext(next: string | number | null | undefined): string | null {
  if (next === null || next === undefined || next === '') return null;
  return String(next);
}

/** Highest password-record id among raw identities; undefined when none is readable. */
function maxPasswordId(raw: readonly unknown[]): number | undefined {
  let max: number | undefined;
  for (const identity of raw) {
    const passwords = (identity as { passwords?: unknown } | null)?.passwords;
    if (!Array.isArray(passwords)) continue;
    for (const record of passwords) {
      const id = (record as { id?: unknown } | null)?.id;
      if (typeof id === 'number' && Number.isFinite(id) && (max === undefined || id > max)) max = id;
    }
  }
  return max;
}

export class UpstreamClient {
  readonly http: UpstreamHttp;
  private readonly logger: Logger;
  private readonly onQuota?: (quota: Quota, endpoint: string) => void;
  private readonly options: UpstreamClientOptions;

  constructor(options: UpstreamClientOptions) {
    this.options = options;
    this.onQuota = options.onQuota;
    // The quota headers of every global-search answer, refusals included: a 403 QUOTA_EXCEEDED
    // is a reading of 0 whether or not it carries the header (docs/architecture.md).
    this.http = new UpstreamHttp({
      ...options,
      onAnswer: (answer) => {
        options.onAnswer?.(answer);
        if (!SEARCH_TIER_ENDPOINTS.has(answer.endpoint)) return;
        const quota = readQuota(answer.headers);
        if (
          answer.status === 403 &&
          upstreamCode(answer.body) === 'QUOTA_EXCEEDED' &&
          quota.remaining === null
        )
          quota.remaining = 0;
        if (quota.remaining !== null || quota.batchReached !== null) this.onQuota?.(quota, answer.endpoint);
      },
    });
    this.logger = options.logger ?? silentLogger;
  }

  /**
   * The same client with other credentials: another tenant's token (docs/configuration.md). It
   * shares everything else, the governor's turns and the quota readings included.
   */
  withAuth(auth: TokenProvider): UpstreamClient {
    return new UpstreamClient({ ...this.options, auth });
  }

  private send(spec: RequestSpec, options?: CallOptions): Promise<RawResponse> {
    return this.http.request(spec, options);
  }

  private deprecated(endpoint: string, replacement: string): void {
    if (deprecationWarned.has(endpoint)) return;
    deprecationWarned.add(endpoint);
    this.logger.warn(`upstream endpoint ${endpoint} is deprecated; ${replacement}`, { endpoint });
  }

  /** The quota an answer reported (onQuota has heard of it already, as of every search answer). */
  private quota(headers: Headers): Quota {
    return readQuota(headers);
  }

  private parseNextPage<T>(
    endpoint: string,
    body: unknown,
    split: (raw: unknown[]) => SplitItems<T>,
  ): Page<T> {
    const envelope = nextPageEnvelopeSchema.safeParse(body);
    if (!envelope.success) {
      throw invalidResponse(endpoint, issuesToText(describeIssues(envelope.error.issues, body)));
    }
    return { ...split(envelope.data.items), next: normaliseNext(envelope.data.next) };
  }

  /** Endpoint 1: who the token belongs to. */
  async tokenTest(options?: CallOptions): Promise<TokenInfo> {
    const endpoint = 'tokenTest';
    const res = await this.send({ endpoint, method: 'GET', path: '/tokens/test' }, options);
    const parsed = tokenInfoSchema.safeParse(res.body);
    if (!parsed.success)
      throw invalidResponse(endpoint, issuesToText(describeIssues(parsed.error.issues, res.body)));
    return parsed.data;
  }

  /**
   * Endpoint 2: identities for account names, 100 per request (longer lists are split and the
   * results merged). Duplicate names are asked once.
   */
  async identitiesByAccounts(
    accounts: readonly string[],
    options?: CallOptions,
  ): Promise<{ identities: Record<string, Identity>; invalid: InvalidItem[] }> {
    const endpoint = 'identitiesByAccounts';
    for (const account of accounts) checkSegment(endpoint, 'every account', account);
    const unique = [...new Set(accounts)];
    const identities: Record<string, Identity> = {};
    const invalid: InvalidItem[] = [];
    for (let i = 0; i < unique.length; i += LIMITS.byAccountsBatch) {
      const batch = unique.slice(i, i + LIMITS.byAccountsBatch);
      const res = await this.send(
        { endpoint, method: 'POST', path: '/astp/identities/by_accounts', body: { accounts: batch } },
        options,
      );
      const parsed = identitiesByAccountSchema.safeParse(res.body);
      if (!parsed.success) throw invalidResponse(endpoint, 'expected an object keyed by account name');
      for (const [name, raw] of Object.entries(parsed.data)) {
        const one = identitySchema.safeParse(raw);
        if (one.success) identities[name] = one.data;
        else invalid.push({ index: i, key: name, issues: describeIssues(one.error.issues, raw), raw });
      }
    }
    return { identities, invalid };
  }

  /** Endpoint 3: events of one identifier group. */
  async searchIdentifierGroupEvents(
    groupId: number,
    body: EventSearchBody = {},
    options?: CallOptions,
  ): Promise<Page<EventItem>> {
    const endpoint = 'identifierGroupEvents';
    checkPositiveId(endpoint, 'identifier_group_id', groupId);
    checkSize(endpoint, body.size, 1, Number.MAX_SAFE_INTEGER);
    const res = await this.send(
      { endpoint, method: 'POST', path: `/{core}/v4/events/identifier_groups/${groupId}/_search`, body },
      options,
    );
    return this.parseNextPage(endpoint, res.body, (raw) => splitValid(eventItemSchema, raw, eventKeyOf));
  }

  /** Endpoint 4: events matching the tenant's identifiers. `size` is at most 10. */
  async searchTenantEvents(body: EventSearchBody = {}, options?: CallOptions): Promise<Page<EventItem>> {
    const endpoint = 'tenantEvents';
    checkSize(endpoint, body.size, 1, LIMITS.tenantEventsSize);
    const res = await this.send(
      { endpoint, method: 'POST', path: '/{core}/v4/events/tenant/_search', body },
      options,
    );
    return this.parseNextPage(endpoint, res.body, (raw) => splitValid(eventItemSchema, raw, eventKeyOf));
  }

  /** Endpoint 5 (deprecated): identities that used a password. Needs the account-takeover module. */
  async identitiesByPassword(
    password: string,
    params: { size?: number; from?: number } = {},
    options?: CallOptions,
  ): Promise<IdentityPage> {
    const endpoint = 'identitiesByPassword';
    const segment = pathSegment(endpoint, 'password', password);
    checkSize(endpoint, params.size, 1, LIMITS.byPasswordSize);
    this.deprecated(endpoint, 'the upstream replaces it with the credential search under /astp/v2');
    const res = await this.send(
      {
        endpoint,
        method: 'GET',
        path: `/leaksdb/identities/by_password/${segment}`,
        query: { size: params.size, from: params.from },
      },
      options,
    );
    return this.identityPage(endpoint, res.body);
  }

  /** Endpoint 6 (deprecated): the v2 credential list, ascending by id by default. */
  async listCredentialsV2(
    params: { size?: number; from?: number | string; order?: 'asc' | 'desc'; source_id?: string } = {},
    options?: CallOptions,
  ): Promise<Page<V2Credential>> {
    const endpoint = 'credentialsV2';
    checkSize(endpoint, params.size, 1, LIMITS.v2CredentialsSize);
    this.deprecated(endpoint, 'the upstream replaces it with the credential search under /astp/v2');
    const res = await this.send(
      {
        endpoint,
        method: 'GET',
        path: '/leaksdb/v2/credentials',
        query: { size: params.size, from: params.from, order: params.order, source_id: params.source_id },
      },
      options,
    );
    return this.parseNextPage(endpoint, res.body, (raw) =>
      splitValid(v2CredentialSchema, raw, credentialKeyOf),
    );
  }

  /** Endpoint 7: identities by account name, with `*` allowed at either end; case-insensitive. */
  async identitiesByKeyword(
    keyword: string,
    params: { from?: number; size?: number } = {},
    options?: CallOptions,
  ): Promise<IdentityPage> {
    const endpoint = 'identitiesByKeyword';
    const segment = pathSegment(endpoint, 'keyword', keyword);
    checkSize(endpoint, params.size, 1, Number.MAX_SAFE_INTEGER);
    const res = await this.send(
      {
        endpoint,
        method: 'GET',
        path: `/leaksdb/identities/by_keyword/${segment}`,
        query: { from: params.from, size: params.size },
      },
      options,
    );
    return this.identityPage(endpoint, res.body);
  }

  /** Endpoint 8: identities of a domain, ascending by id. */
  async identitiesByDomain(
    domain: string,
    params: { from?: number; size?: number } = {},
    options?: CallOptions,
  ): Promise<IdentityPage> {
    const endpoint = 'identitiesByDomain';
    const segment = pathSegment(endpoint, 'domain', domain);
    checkSize(endpoint, params.size, 1, Number.MAX_SAFE_INTEGER);
    const res = await this.send(
      {
        endpoint,
        method: 'GET',
        path: `/leaksdb/identities/by_domain/${segment}`,
        query: { from: params.from, size: params.size },
      },
      options,
    );
    return this.identityPage(endpoint, res.body);
  }

  private identityPage(endpoint: string, body: unknown): IdentityPage {
    const parsed = identityArraySchema.safeParse(body);
    if (!parsed.success) throw invalidResponse(endpoint, 'expected an array of identities');
    const split = splitValid(identitySchema, parsed.data, (raw) => {
      const name = (raw as { name?: unknown } | null)?.name;
      return typeof name === 'string' ? name : undefined;
    });
    return { ...split, lastId: maxPasswordId(parsed.data), rawCount: parsed.data.length };
  }

  /** Endpoint 9: the global credential search for a domain. Draws on the global-search quota. */
  async searchGlobalCredentials(
    body: CredentialSearchBody,
    options?: CallOptions,
  ): Promise<QuotaPage<Credential>> {
    const endpoint = 'globalCredentials';
    if (body?.query?.type !== 'domain') {
      throw new RequestLimitError(endpoint, `${endpoint}: query must be {type: "domain", fqdn}`);
    }
    checkSegment(endpoint, 'query.fqdn', body.query.fqdn);
    checkSize(endpoint, body.size, 1, LIMITS.globalCredentialsSize);
    const res = await this.send(
      { endpoint, method: 'POST', path: '/{core}/v4/credentials/global/_search', body },
      options,
    );
    const quota = this.quota(res.headers);
    const page = this.parseNextPage(endpoint, res.body, (raw) =>
      splitValid(credentialSchema, raw, credentialKeyOf),
    );
    return { ...page, quota };
  }

  /** Endpoint 10: enable or disable a monitored asset. */
  async toggleAsset(assetId: number, isDisabled: boolean, options?: CallOptions): Promise<Asset> {
    const endpoint = 'assetToggle';
    checkPositiveId(endpoint, 'asset_id', assetId);
    if (typeof isDisabled !== 'boolean')
      throw new RequestLimitError(endpoint, `${endpoint}: is_disabled must be a boolean`);
    const res = await this.send(
      {
        endpoint,
        method: 'POST',
        path: `/{core}/v2/assets/${assetId}/toggle`,
        body: { is_disabled: isDisabled },
      },
      options,
    );
    const parsed = assetResponseSchema.safeParse(res.body);
    if (!parsed.success)
      throw invalidResponse(endpoint, issuesToText(describeIssues(parsed.error.issues, res.body)));
    return parsed.data.asset;
  }

  /**
   * Endpoint 12 (from the vendor's public docs, beyond the spec's eleven): ignore, remediate, or
   * undo either, on at most 10 events a request. Any 2xx is success (the body is not documented).
   */
  async eventAction(type: EventActionType, uids: readonly string[], options?: CallOptions): Promise<void> {
    const endpoint = 'eventActions';
    if (!(EVENT_ACTIONS as readonly string[]).includes(type))
      throw new RequestLimitError(endpoint, `${endpoint}: type must be one of ${EVENT_ACTIONS.join(', ')}`);
    if (uids.length === 0 || uids.length > LIMITS.eventActionTargets)
      throw new RequestLimitError(
        endpoint,
        `${endpoint}: 1 to ${LIMITS.eventActionTargets} uids a request, got ${uids.length}`,
      );
    for (const uid of uids) checkSegment(endpoint, 'every uid', uid);
    await this.send(
      {
        endpoint,
        method: 'POST',
        path: '/{core}/v4/events/actions',
        body: { action: { type }, targets: uids.map((uid) => ({ uid })) },
      },
      options,
    );
  }

  /**
   * Endpoint 12 for any number of uids: validated first (a bad type or uid sends nothing), then
   * sent 10 at a time, in order. A refused request does not stop the next; each batch says how it
   * went. The upstream refuses a request whole when one of its uids is wrong (an unknown event):
   * a batch refused for what it holds (a 4xx other than our credentials, the rate or a timeout) is
   * sent again one uid at a time, so each uid gets its own answer. Duplicate uids are sent once.
   */
  async eventActions(
    type: EventActionType,
    uids: readonly string[],
    options?: CallOptions,
  ): Promise<EventActionBatch[]> {
    const endpoint = 'eventActions';
    if (!(EVENT_ACTIONS as readonly string[]).includes(type))
      throw new RequestLimitError(endpoint, `${endpoint}: type must be one of ${EVENT_ACTIONS.join(', ')}`);
    for (const uid of uids) checkSegment(endpoint, 'every uid', uid);
    const unique = [...new Set(uids)];
    const send = async (batch: string[]): Promise<EventActionBatch> => {
      try {
        await this.eventAction(type, batch, options);
        return { uids: batch, ok: true };
      } catch (error) {
        if (!(error instanceof UpstreamError)) throw error;
        return { uids: batch, ok: false, error };
      }
    };
    const out: EventActionBatch[] = [];
    for (let i = 0; i < unique.length; i += LIMITS.eventActionTargets) {
      const batch = await send(unique.slice(i, i + LIMITS.eventActionTargets));
      if (batch.ok || batch.uids.length === 1 || !refusedForItsTargets(batch.error)) {
        out.push(batch);
        continue;
      }
      for (const uid of batch.uids) out.push(await send([uid]));
    }
    return out;
  }

  /** Endpoint 11 (deprecated): the legacy global search. Draws on the global-search quota. */
  async legacyGlobalSearch(
    params: LegacySearchParams = {},
    options?: CallOptions,
  ): Promise<LegacySearchPage> {
    const endpoint = 'legacySearch';
    checkSize(endpoint, params.size, 1, Number.MAX_SAFE_INTEGER);
    this.deprecated(endpoint, 'the upstream replaces it with the v4 global event search');
    const query: Record<string, QueryValue> = { ...params };
    const res = await this.send({ endpoint, method: 'POST', path: '/{core}/v2/search/', query }, options);
    const quota = this.quota(res.headers);
    const envelope = legacySearchEnvelopeSchema.safeParse(res.body);
    if (!envelope.success) {
      throw invalidResponse(endpoint, issuesToText(describeIssues(envelope.error.issues, res.body)));
    }
    const split = splitValid(legacySearchItemSchema, envelope.data.items);
    return {
      ...split,
      next: normaliseNext(envelope.data.links?.next),
      searchAfter: envelope.data.search_after ?? null,
      nbHits: envelope.data.nb_hits ?? null,
      quota,
    };
  }

  // --- Iterators ---------------------------------------------------------------------------------

  tenantEventPages(
    body: EventSearchBody = {},
    options?: CallOptions,
  ): AsyncGenerator<Fetched<Page<EventItem>>> {
    return pagesByNext((from) => this.searchTenantEvents({ ...body, from }, options), body.from ?? undefined);
  }

  identifierGroupEventPages(
    groupId: number,
    body: EventSearchBody = {},
    options?: CallOptions,
  ): AsyncGenerator<Fetched<Page<EventItem>>> {
    return pagesByNext(
      (from) => this.searchIdentifierGroupEvents(groupId, { ...body, from }, options),
      body.from ?? undefined,
    );
  }

  globalCredentialPages(
    body: CredentialSearchBody,
    options?: CallOptions,
  ): AsyncGenerator<Fetched<QuotaPage<Credential>>> {
    return pagesByNext(
      (from) => this.searchGlobalCredentials({ ...body, from }, options),
      body.from ?? undefined,
    );
  }

  credentialsV2Pages(
    params: { size?: number; order?: 'asc' | 'desc'; source_id?: string; from?: string } = {},
    options?: CallOptions,
  ): AsyncGenerator<Fetched<Page<V2Credential>>> {
    return pagesByNext((from) => this.listCredentialsV2({ ...params, from }, options), params.from);
  }

  legacySearchPages(
    params: LegacySearchParams = {},
    options?: CallOptions,
  ): AsyncGenerator<Fetched<LegacySearchPage>> {
    let searchAfter = params.search_after;
    return pagesByNext(async (from) => {
      const page = await this.legacyGlobalSearch(
        { ...params, from, search_after: from ? searchAfter : params.search_after },
        options,
      );
      searchAfter = page.searchAfter ?? undefined;
      return page;
    }, params.from);
  }

  identitiesByKeywordPages(keyword: string, params: { size?: number } = {}, options?: CallOptions) {
    return pagesById((from) => this.identitiesByKeyword(keyword, { ...params, from }, options));
  }

  identitiesByDomainPages(domain: string, params: { size?: number } = {}, options?: CallOptions) {
    return pagesById((from) => this.identitiesByDomain(domain, { ...params, from }, options));
  }

  identitiesByPasswordPages(password: string, params: { size?: number } = {}, options?: CallOptions) {
    return pagesById((from) => this.identitiesByPassword(password, { ...params, from }, options));
  }
}

/**
 * An endpoint 12 refusal that may be about one of the request's uids: a 4xx the upstream sent
 * (not one we raised before sending), other than our credentials (401, 403), a timeout (408) or
 * the rate (429).
 */
function refusedForItsTargets(error: UpstreamError): boolean {
  const status = error.status;
  return status !== undefined && status >= 400 && status < 500 && ![401, 403, 408, 429].includes(status);
}
