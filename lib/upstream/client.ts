/**
 * A typed client for the twelve endpoints of the upstream (docs/architecture.md: the spec's eleven
 * and the event actions), plus the token exchange (auth.ts).
 *
 * Each method checks the spec's limits before sending, validates the response, and returns pages
 * whose items are split into valid ones and invalid ones (validate.ts), so one odd item never
 * costs its page. Paged endpoints also have `...Pages` iterators (paging.ts).
 *
 * The three endpoints a poll calls (events of the tenant and of a group, the global credential
 * search) are here; the others are other-endpoints.ts's, loaded with the first call of one (a
 * worker's start does not carry them): their methods here only load it and hand it this client.
 */

import { lazily } from '../lazy.ts';
import type { Logger } from '../log.ts';
import { silentLogger } from '../log.ts';
import type { TokenProvider } from './auth.ts';
import { checkPositiveId, checkSegment, checkSize, LIMITS, parseNextPage, readQuota } from './endpoint.ts';
import { RequestLimitError } from './errors.ts';
import type { CallOptions, RawResponse, RequestSpec, UpstreamHttpOptions } from './http.ts';
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
import type { Asset, Identity, TokenInfo, V2Credential } from './schemas.ts';
import { type Credential, credentialSchema, type EventItem, eventItemSchema } from './schemas-polled.ts';
import type { InvalidItem } from './validate.ts';
import { credentialKeyOf, eventKeyOf, splitValid } from './validate.ts';
import { upstreamCode } from './wire.ts';

export { LIMITS, resetDeprecationWarnings } from './endpoint.ts';
export type * from './requests.ts';
export { EVENT_ACTIONS } from './requests.ts';

export interface UpstreamClientOptions extends UpstreamHttpOptions {
  /** Receives the quota headers of every global search response. */
  onQuota?: (quota: Quota, endpoint: string) => void;
}

/** The endpoints no poll calls, loaded with the first call of one. */
const others = lazily(
  'the upstream endpoints a poll does not call (upstream/other-endpoints.ts)',
  () => import('./other-endpoints.ts'),
);

export class UpstreamClient {
  readonly http: UpstreamHttp;
  /** Where a deprecated endpoint's first call is warned of. */
  readonly logger: Logger;
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

  /** Endpoint 1: who the token belongs to. */
  async tokenTest(options?: CallOptions): Promise<TokenInfo> {
    return (await others()).tokenTest(this, options);
  }

  /**
   * Endpoint 2: identities for account names, 100 per request (longer lists are split and the
   * results merged). Duplicate names are asked once.
   */
  async identitiesByAccounts(
    accounts: readonly string[],
    options?: CallOptions,
  ): Promise<{ identities: Record<string, Identity>; invalid: InvalidItem[] }> {
    return (await others()).identitiesByAccounts(this, accounts, options);
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
    return parseNextPage(endpoint, res.body, (raw) => splitValid(eventItemSchema, raw, eventKeyOf));
  }

  /** Endpoint 4: events matching the tenant's identifiers. `size` is at most 10. */
  async searchTenantEvents(body: EventSearchBody = {}, options?: CallOptions): Promise<Page<EventItem>> {
    const endpoint = 'tenantEvents';
    checkSize(endpoint, body.size, 1, LIMITS.tenantEventsSize);
    const res = await this.send(
      { endpoint, method: 'POST', path: '/{core}/v4/events/tenant/_search', body },
      options,
    );
    return parseNextPage(endpoint, res.body, (raw) => splitValid(eventItemSchema, raw, eventKeyOf));
  }

  /** Endpoint 5 (deprecated): identities that used a password. Needs the account-takeover module. */
  async identitiesByPassword(
    password: string,
    params: { size?: number; from?: number } = {},
    options?: CallOptions,
  ): Promise<IdentityPage> {
    return (await others()).identitiesByPassword(this, password, params, options);
  }

  /** Endpoint 6 (deprecated): the v2 credential list, ascending by id by default. */
  async listCredentialsV2(
    params: { size?: number; from?: number | string; order?: 'asc' | 'desc'; source_id?: string } = {},
    options?: CallOptions,
  ): Promise<Page<V2Credential>> {
    return (await others()).listCredentialsV2(this, params, options);
  }

  /** Endpoint 7: identities by account name, with `*` allowed at either end; case-insensitive. */
  async identitiesByKeyword(
    keyword: string,
    params: { from?: number; size?: number } = {},
    options?: CallOptions,
  ): Promise<IdentityPage> {
    return (await others()).identitiesByKeyword(this, keyword, params, options);
  }

  /** Endpoint 8: identities of a domain, ascending by id. */
  async identitiesByDomain(
    domain: string,
    params: { from?: number; size?: number } = {},
    options?: CallOptions,
  ): Promise<IdentityPage> {
    return (await others()).identitiesByDomain(this, domain, params, options);
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
    // The quota this answer reported (onQuota has heard of it already, as of every search answer).
    const quota = readQuota(res.headers);
    const page = parseNextPage(endpoint, res.body, (raw) =>
      splitValid(credentialSchema, raw, credentialKeyOf),
    );
    return { ...page, quota };
  }

  /** Endpoint 10: enable or disable a monitored asset. */
  async toggleAsset(assetId: number, isDisabled: boolean, options?: CallOptions): Promise<Asset> {
    return (await others()).toggleAsset(this, assetId, isDisabled, options);
  }

  /**
   * Endpoint 12 (from the vendor's public docs, beyond the spec's eleven): ignore, remediate, or
   * undo either, on at most 10 events a request. Any 2xx is success (the body is not documented).
   */
  async eventAction(type: EventActionType, uids: readonly string[], options?: CallOptions): Promise<void> {
    return (await others()).eventAction(this, type, uids, options);
  }

  /**
   * Endpoint 12 for any number of uids, 10 a request through `eventAction`; a batch refused for
   * what it holds is sent again one uid at a time (other-endpoints.ts says how).
   */
  async eventActions(
    type: EventActionType,
    uids: readonly string[],
    options?: CallOptions,
  ): Promise<EventActionBatch[]> {
    return (await others()).eventActions((t, batch, o) => this.eventAction(t, batch, o), type, uids, options);
  }

  /** Endpoint 11 (deprecated): the legacy global search. Draws on the global-search quota. */
  async legacyGlobalSearch(
    params: LegacySearchParams = {},
    options?: CallOptions,
  ): Promise<LegacySearchPage> {
    return (await others()).legacyGlobalSearch(this, params, options);
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
