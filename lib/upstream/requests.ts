/**
 * What the client's requests take and its pages give: the search bodies and queries of the
 * endpoints, the filters, the event actions, and the pages with their items split into valid and
 * invalid ones and, for a global search, the quota the answer reported. The methods that send them
 * are client.ts.
 */
import type { UpstreamError } from './errors.ts';
import type { Severity } from './event-types.ts';
import type { IdPage } from './paging.ts';
import type { Identity, LegacySearchItem } from './schemas.ts';
import type { InvalidItem, SplitItems } from './validate.ts';

/** What endpoint 12 does to events: sets or clears their `is_ignored` / `is_remediated` flags. */
export const EVENT_ACTIONS = ['ignore', 'remediate', 'unignore', 'unremediate'] as const;
export type EventActionType = (typeof EVENT_ACTIONS)[number];

/** One request of `eventActions`: its uids, and whether the upstream took it. */
export type EventActionBatch =
  | { uids: string[]; ok: true }
  | { uids: string[]; ok: false; error: UpstreamError };

export interface EventFilters {
  severity?: Severity[];
  type?: string[];
  estimated_created_at?: { gt?: string; gte?: string; lt?: string; lte?: string };
  tags?: string[];
  is_ignored?: boolean;
  is_remediated?: boolean;
  [key: string]: unknown;
}

/** The shared search body of endpoints 3 and 4. */
export interface EventSearchBody {
  query?: Record<string, unknown>;
  size?: number;
  from?: string | null;
  order?: 'asc' | 'desc';
  filters?: EventFilters;
}

/** Body of endpoint 9. */
export interface CredentialSearchBody {
  query: { type: 'domain'; fqdn: string };
  filters?: { imported_at?: { gte?: string; lte?: string }; [key: string]: unknown };
  from?: string | null;
  size?: number;
  include?: 'known_password_id'[];
  order?: 'asc' | 'desc';
}

/** Query of endpoint 11. */
export interface LegacySearchParams {
  fields?: string[];
  time?: string;
  size?: number;
  search_after?: string;
  from?: string;
  tags?: string[];
  tags_query_operator?: string;
  types?: string[];
  experimental_types?: string[];
  event_action?:
    | 'default'
    | 'ignored'
    | 'remediated'
    | 'risk_score_edited'
    | 'exclude_ignored'
    | 'ignored_or_remediated';
  event_actions?: string[];
  risks?: number[];
  order?: 'asc' | 'desc';
  sort_by?: 'created' | 'indexed' | 'updated' | 'alertable-materialized' | 'materialized' | 'searchable';
  use_global_policies?: boolean;
  time_zone?: string;
  query?: string;
  has_modified_risk_score?: boolean;
  has_notes?: boolean;
}

/** Global-search quota as the upstream reported it on this response (null when it did not). */
export interface Quota {
  remaining: number | null;
  batchReached: boolean | null;
}

export interface Page<T> extends SplitItems<T> {
  next: string | null;
}

export interface QuotaPage<T> extends Page<T> {
  quota: Quota;
}

export interface LegacySearchPage extends QuotaPage<LegacySearchItem> {
  searchAfter: string | null;
  nbHits: number | null;
}

export type IdentityPage = IdPage<Identity> & { invalid: InvalidItem[] };
