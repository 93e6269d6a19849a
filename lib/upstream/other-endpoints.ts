/**
 * The upstream endpoints no poll calls, behind the client's methods of the same names (client.ts
 * loads this with the first call of one): the token test (1), identities (2, 5, 7, 8), the v2
 * credential list (6), the asset toggle (10), the legacy search (11), event actions (12), and the
 * iterators over their pages. The API, the CLI, a lookup or an event action use them; a worker's
 * start does not carry them. Each checks the spec's limits before sending and validates the answer,
 * as client.ts's methods do.
 *
 * It is longer than 300 lines because it is one side of one split (what a worker's start carries,
 * client.ts, and what it does not, here): each endpoint's checks and answer read beside the others.
 */
import type { Logger } from '../log.ts';
import {
  checkPositiveId,
  checkSegment,
  checkSize,
  invalidResponse,
  LIMITS,
  normaliseNext,
  parseNextPage,
  readQuota,
  warnDeprecated,
} from './endpoint.ts';
import { RequestLimitError, UpstreamError } from './errors.ts';
import type { CallOptions, QueryValue, RequestSpec, UpstreamHttp } from './http.ts';
import type {
  EventActionBatch,
  EventActionType,
  IdentityPage,
  LegacySearchPage,
  LegacySearchParams,
  Page,
} from './requests.ts';
import { EVENT_ACTIONS } from './requests.ts';
import {
  type Asset,
  assetResponseSchema,
  type Identity,
  identitiesByAccountSchema,
  identityArraySchema,
  identitySchema,
  legacySearchEnvelopeSchema,
  legacySearchItemSchema,
  type TokenInfo,
  tokenInfoSchema,
  type V2Credential,
  v2CredentialSchema,
} from './schemas.ts';
import type { InvalidItem } from './validate.ts';
import { credentialKeyOf, describeIssues, issuesToText, splitValid } from './validate.ts';

/** What of the client these need: its HTTP (turns, retries, tokens) and its logger. */
export interface Sender {
  readonly http: UpstreamHttp;
  readonly logger: Logger;
}

const send = (client: Sender, spec: RequestSpec, options?: CallOptions) => client.http.request(spec, options);

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

function identityPage(endpoint: string, body: unknown): IdentityPage {
  const parsed = identityArraySchema.safeParse(body);
  if (!parsed.success) throw invalidResponse(endpoint, 'expected an array of identities');
  const split = splitValid(identitySchema, parsed.data, (raw) => {
    const name = (raw as { name?: unknown } | null)?.name;
    return typeof name === 'string' ? name : undefined;
  });
  return { ...split, lastId: maxPasswordId(parsed.data), rawCount: parsed.data.length };
}

/** Endpoint 1: who the token belongs to. */
export async function tokenTest(client: Sender, options?: CallOptions): Promise<TokenInfo> {
  const endpoint = 'tokenTest';
  const res = await send(client, { endpoint, method: 'GET', path: '/tokens/test' }, options);
  const parsed = tokenInfoSchema.safeParse(res.body);
  if (!parsed.success)
    throw invalidResponse(endpoint, issuesToText(describeIssues(parsed.error.issues, res.body)));
  return parsed.data;
}

/**
 * Endpoint 2: identities for account names, 100 per request (longer lists are split and the
 * results merged). Duplicate names are asked once.
 */
export async function identitiesByAccounts(
  client: Sender,
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
    const res = await send(
      client,
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

/** Endpoint 5 (deprecated): identities that used a password. Needs the account-takeover module. */
export async function identitiesByPassword(
  client: Sender,
  password: string,
  params: { size?: number; from?: number } = {},
  options?: CallOptions,
): Promise<IdentityPage> {
  const endpoint = 'identitiesByPassword';
  const segment = pathSegment(endpoint, 'password', password);
  checkSize(endpoint, params.size, 1, LIMITS.byPasswordSize);
  warnDeprecated(
    client.logger,
    endpoint,
    'the upstream replaces it with the credential search under /astp/v2',
  );
  const res = await send(
    client,
    {
      endpoint,
      method: 'GET',
      path: `/leaksdb/identities/by_password/${segment}`,
      query: { size: params.size, from: params.from },
    },
    options,
  );
  return identityPage(endpoint, res.body);
}

/** Endpoint 6 (deprecated): the v2 credential list, ascending by id by default. */
export async function listCredentialsV2(
  client: Sender,
  params: { size?: number; from?: number | string; order?: 'asc' | 'desc'; source_id?: string } = {},
  options?: CallOptions,
): Promise<Page<V2Credential>> {
  const endpoint = 'credentialsV2';
  checkSize(endpoint, params.size, 1, LIMITS.v2CredentialsSize);
  warnDeprecated(
    client.logger,
    endpoint,
    'the upstream replaces it with the credential search under /astp/v2',
  );
  const res = await send(
    client,
    {
      endpoint,
      method: 'GET',
      path: '/leaksdb/v2/credentials',
      query: { size: params.size, from: params.from, order: params.order, source_id: params.source_id },
    },
    options,
  );
  return parseNextPage(endpoint, res.body, (raw) => splitValid(v2CredentialSchema, raw, credentialKeyOf));
}

/** Endpoints 7 and 8: one page of identities under `/leaksdb/identities/by_<part>/<value>`. */
async function identitiesBy(
  client: Sender,
  endpoint: 'identitiesByKeyword' | 'identitiesByDomain',
  part: 'keyword' | 'domain',
  value: string,
  params: { from?: number; size?: number },
  options?: CallOptions,
): Promise<IdentityPage> {
  const segment = pathSegment(endpoint, part, value);
  checkSize(endpoint, params.size, 1, Number.MAX_SAFE_INTEGER);
  const res = await send(
    client,
    {
      endpoint,
      method: 'GET',
      path: `/leaksdb/identities/by_${part}/${segment}`,
      query: { from: params.from, size: params.size },
    },
    options,
  );
  return identityPage(endpoint, res.body);
}

/** Endpoint 7: identities by account name, with `*` allowed at either end; case-insensitive. */
export function identitiesByKeyword(
  client: Sender,
  keyword: string,
  params: { from?: number; size?: number } = {},
  options?: CallOptions,
): Promise<IdentityPage> {
  return identitiesBy(client, 'identitiesByKeyword', 'keyword', keyword, params, options);
}

/** Endpoint 8: identities of a domain, ascending by id. */
export function identitiesByDomain(
  client: Sender,
  domain: string,
  params: { from?: number; size?: number } = {},
  options?: CallOptions,
): Promise<IdentityPage> {
  return identitiesBy(client, 'identitiesByDomain', 'domain', domain, params, options);
}

/** Endpoint 10: enable or disable a monitored asset. */
export async function toggleAsset(
  client: Sender,
  assetId: number,
  isDisabled: boolean,
  options?: CallOptions,
): Promise<Asset> {
  const endpoint = 'assetToggle';
  checkPositiveId(endpoint, 'asset_id', assetId);
  if (typeof isDisabled !== 'boolean')
    throw new RequestLimitError(endpoint, `${endpoint}: is_disabled must be a boolean`);
  const res = await send(
    client,
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
export async function eventAction(
  client: Sender,
  type: EventActionType,
  uids: readonly string[],
  options?: CallOptions,
): Promise<void> {
  const endpoint = 'eventActions';
  if (!(EVENT_ACTIONS as readonly string[]).includes(type))
    throw new RequestLimitError(endpoint, `${endpoint}: type must be one of ${EVENT_ACTIONS.join(', ')}`);
  if (uids.length === 0 || uids.length > LIMITS.eventActionTargets)
    throw new RequestLimitError(
      endpoint,
      `${endpoint}: 1 to ${LIMITS.eventActionTargets} uids a request, got ${uids.length}`,
    );
  for (const uid of uids) checkSegment(endpoint, 'every uid', uid);
  await send(
    client,
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
 * `one` sends one request (the client's `eventAction`, which a test may watch).
 */
export async function eventActions(
  one: (type: EventActionType, uids: string[], options?: CallOptions) => Promise<void>,
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
      await one(type, batch, options);
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

/**
 * An endpoint 12 refusal that may be about one of the request's uids: a 4xx the upstream sent
 * (not one we raised before sending), other than our credentials (401, 403), a timeout (408) or
 * the rate (429).
 */
function refusedForItsTargets(error: UpstreamError): boolean {
  const status = error.status;
  return status !== undefined && status >= 400 && status < 500 && ![401, 403, 408, 429].includes(status);
}

/** Endpoint 11 (deprecated): the legacy global search. Draws on the global-search quota. */
export async function legacyGlobalSearch(
  client: Sender,
  params: LegacySearchParams = {},
  options?: CallOptions,
): Promise<LegacySearchPage> {
  const endpoint = 'legacySearch';
  checkSize(endpoint, params.size, 1, Number.MAX_SAFE_INTEGER);
  warnDeprecated(client.logger, endpoint, 'the upstream replaces it with the v4 global event search');
  const query: Record<string, QueryValue> = { ...params };
  const res = await send(client, { endpoint, method: 'POST', path: '/{core}/v2/search/', query }, options);
  const quota = readQuota(res.headers);
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
