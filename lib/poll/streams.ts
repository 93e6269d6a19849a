/**
 * The streams a config asks to poll, and how each one pages through the upstream:
 * - `tenant`: endpoint 4, the tenant's events;
 * - `group:<id>`: endpoint 3, one identifier group's events;
 * - `credentials:<domain>`: endpoint 9, the global credential search for one domain.
 *
 * Every stream pages with `order: "asc"`, and its request stays the same from run to run, so a
 * saved `next` stays valid. Event requests carry no time bound of ours (poll/walk.ts says why);
 * credential requests carry the walk's `imported_at` bound, fixed when the walk starts. The
 * fingerprint covers what the upstream needs to be the same for a `next` to stay valid: filters and
 * order (the bound is stored beside the cursor). `lookback` is not in it: it only shapes a first
 * walk, so changing it keeps every cursor.
 */
import { createHash } from 'node:crypto';
import type { ItemKind, SourceId } from '../model.ts';
import type { AlertsConfig } from '../rules/config.ts';
import { parseDuration } from '../rules/duration.ts';
import { takeTurns } from '../turns.ts';
import type { EventFilters, Quota, UpstreamClient } from '../upstream/client.ts';
import type { CallOptions } from '../upstream/http.ts';
import type { Credential, EventItem } from '../upstream/schemas.ts';
import type { InvalidItem } from '../upstream/validate.ts';
import {
  credentialStreamId,
  groupStreamId,
  type Scope,
  scopesOf,
  type TenantRef,
  tenantStreamId,
} from './ids.ts';

export type PollKind = 'events' | 'credentials';

export interface StreamPage {
  items: (EventItem | Credential)[];
  invalid: InvalidItem[];
  next: string | null;
  quota?: Quota;
}

export interface StreamSpec {
  id: SourceId;
  /** The `tenants` entry it polls for (its token, its items' keys); none for the top-level sources. */
  tenant?: TenantRef;
  kind: ItemKind;
  lookbackMs: number;
  firstRun: 'alert' | 'baseline';
  fingerprint: string;
  /** The client's name of the request (`tenantEvents`...), to tell its errors from the token exchange's. */
  endpoint: string;
  /** Nothing else can produce this stream's items, so its delivery records may be batch-written. */
  exclusive: boolean;
  /** Reads one page (a POST to the search); `since` is the walk's bound (sent by credential streams only). */
  page(from: string | undefined, since: string, options: CallOptions): Promise<StreamPage>;
  /** The item's place in time for the stream's position and poll lag: `matched_at` / `imported_at`. */
  itemTime(item: EventItem | Credential): string;
  /**
   * The time that places an item in its feed, for streams where the upstream never changes it
   * (state/records/packs.ts): a credential's import time. Events have none: their times are estimates the
   * upstream may revise, and a moved item would not be found where it was packed.
   */
  feedTime?(item: EventItem | Credential): string;
}

export const EVENT_PAGE_SIZE = 10;

function fingerprintOf(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 32);
}

/** The configured filters as they are, and nothing of ours: no time bound (poll/walk.ts). */
function eventBody(filters: AlertsConfig['sources']['identifierGroups'][number]['filters'], from?: string) {
  return {
    size: EVENT_PAGE_SIZE,
    order: 'asc' as const,
    filters: filters as EventFilters,
    ...(from ? { from } : {}),
  };
}

const eventTime = (item: EventItem | Credential) => (item as EventItem).metadata.matched_at;
const credentialTime = (item: EventItem | Credential) => (item as Credential).imported_at;

/** Whether two configured domains can return the same credentials (the search matches "contains"). */
function domainsOverlap(a: string, b: string): boolean {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x.includes(y) || y.includes(x);
}

/** Who asks the upstream for a scope: the client with the token of that tenant (or the top level's). */
export type UpstreamFor = (tenant?: TenantRef) => UpstreamClient;

/** Every stream of `kind` the config asks for: the top-level sources', then each tenant's. */
export function streamsFor(
  config: AlertsConfig,
  kind: PollKind,
  upstream: UpstreamClient | UpstreamFor,
): StreamSpec[] {
  const clientFor = typeof upstream === 'function' ? upstream : () => upstream;
  // Tenants take turns (the config's order within each): none waits behind another's streams.
  return takeTurns(scopesOf(config).map((scope) => scopeStreams(scope, kind, clientFor(scope.tenant))));
}

function scopeStreams(scope: Scope, kind: PollKind, upstream: UpstreamClient): StreamSpec[] {
  const specs: StreamSpec[] = [];
  const { sources } = scope;
  const t = scope.tenant?.id;
  const tenantOf = scope.tenant ? { tenant: scope.tenant } : {};
  if (kind === 'events') {
    const tenant = sources.tenantEvents;
    const groups = sources.identifierGroups;
    const eventStreams = (tenant?.enabled ? 1 : 0) + groups.length;
    if (tenant?.enabled) {
      const id = tenantStreamId(t);
      specs.push({
        id,
        ...tenantOf,
        kind: 'event',
        lookbackMs: parseDuration(tenant.lookback) ?? 86_400_000,
        firstRun: tenant.firstRun,
        fingerprint: fingerprintOf({ v: 2, stream: id, filters: tenant.filters, order: 'asc' }),
        endpoint: 'tenantEvents',
        exclusive: eventStreams === 1,
        page: (from, _since, options) =>
          upstream.searchTenantEvents(eventBody(tenant.filters, from), options),
        itemTime: eventTime,
      });
    }
    for (const group of groups) {
      const id = groupStreamId(group.id, t);
      specs.push({
        id,
        ...tenantOf,
        kind: 'event',
        lookbackMs: parseDuration(group.lookback) ?? 86_400_000,
        firstRun: group.firstRun,
        fingerprint: fingerprintOf({ v: 2, stream: id, filters: group.filters, order: 'asc' }),
        endpoint: 'identifierGroupEvents',
        exclusive: eventStreams === 1,
        page: (from, _since, options) =>
          upstream.searchIdentifierGroupEvents(group.id, eventBody(group.filters, from), options),
        itemTime: eventTime,
      });
    }
  } else if (sources.credentials) {
    const source = sources.credentials;
    const domains = [...new Set(source.domains.map((d) => d.toLowerCase()))];
    for (const domain of domains) {
      const id = credentialStreamId(domain, t);
      specs.push({
        id,
        ...tenantOf,
        kind: 'credential',
        lookbackMs: parseDuration(source.lookback) ?? 7 * 86_400_000,
        firstRun: source.firstRun,
        fingerprint: fingerprintOf({ v: 2, stream: id, order: 'asc' }),
        endpoint: 'globalCredentials',
        exclusive: !domains.some((other) => other !== domain && domainsOverlap(other, domain)),
        page: (from, since, options) =>
          upstream.searchGlobalCredentials(
            {
              query: { type: 'domain', fqdn: domain },
              filters: { imported_at: { gte: since } },
              size: source.pageSize,
              order: 'asc',
              ...(from ? { from } : {}),
            },
            options,
          ),
        itemTime: credentialTime,
        feedTime: credentialTime,
      });
    }
  }
  return specs;
}
