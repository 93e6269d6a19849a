/**
 * The API's answers the console reads (docs/api.md and docs/console.md), as the page sees
 * them: JSON from the bearer API, never trusted as markup. Kept here, apart from lib/api, because the
 * page is compiled for the browser on its own (its tsconfig has the DOM and no Node).
 */

import type { Scope } from '../../api/scopes.ts';

// The scopes are the API's own list (no imports there: it compiles for the browser too).
export { SCOPES, type Scope } from '../../api/scopes.ts';

/** What a grant allows, and on which tenants' data (none named: all of it). */
export interface Grant {
  scopes: Scope[];
  /** `tenants` entries' ids; with `topLevel`, the top-level sources' too. */
  tenants?: number[];
  topLevel?: true;
}

/** `GET /whoami`: the token's holder and what it may do, one grant per client. */
export interface WhoAmI {
  name: string;
  grants: Grant[];
  /** The API runs under `start --dry-run`: what would act outside answers 409 `dry_run`. */
  dryRun?: boolean;
}

export interface Tenant {
  id: number;
  name: string;
}

export const VERDICTS = ['at_risk', 'rotated', 'disabled', 'no_account', 'unknown'] as const;

/** An item's `_identity` (section 12). */
export interface Identity {
  provider: string;
  verdict: string;
  reason?: string;
  userId?: string;
  displayName?: string;
  enabled?: boolean;
  passwordChangedAt?: string;
  leakDate?: string;
}

/** Delivery states as section 13 names them; `retrying` is a pending one after a failed attempt. */
export const DELIVERY_STATES = ['sent', 'pending', 'retrying', 'dead', 'silenced'] as const;

export interface Delivery {
  id: string;
  destination: string;
  status: string;
  attempts: number;
  lastError?: string;
  sentAt?: string;
}

export interface AlertRow {
  key: string;
  kind: string;
  severity?: string;
  title: string;
  tenant?: Tenant;
  matchedAt?: string;
  identity?: Identity;
  deliveries: Delivery[];
}

export interface AlertPage {
  items: AlertRow[];
  cursor?: string;
}

export interface ActionEntry {
  id: string;
  type: string;
  by: string;
  at: string;
  result: unknown;
}

export interface AuditEntry {
  at: string;
  who: string;
  what: string;
  target: unknown;
  result: unknown;
}

export interface AlertDetail {
  item: Record<string, unknown>;
  key: string;
  kind: string;
  tenant?: Tenant;
  identity?: Identity;
  deliveries: Delivery[];
  actions: ActionEntry[];
  audit: AuditEntry[];
}

export interface AuditPage {
  items: AuditEntry[];
  cursor?: string;
}

export interface Silence {
  id: string;
  match: Record<string, unknown>;
  until: string;
  reason: string;
  createdBy: string;
  createdAt: string;
  expiredAt?: string;
  expiredBy?: string;
}

export interface StreamLine {
  stream: string;
  tenant?: Tenant | null;
  lastPolledAt: string | null;
  lagSeconds: number | null;
  lastResult: string | null;
}

export interface DestinationLine {
  destination: string;
  pending: number;
  pendingMore?: boolean;
  dead: number;
  deadMore?: boolean;
  refusing: boolean;
}

export interface ProviderLine {
  tenant: Tenant | null;
  provider: string;
  type: string;
  lastLookupAt: string | null;
  refusing: boolean;
  refusedAt?: string;
  refusedMessage?: string;
}

/**
 * `GET /status`. A client bound to tenants gets its tenants' streams and providers only: the
 * counts that mix tenants (destinations' queues, active silences, the quota) are left out.
 */
export interface Status {
  streams: StreamLine[];
  destinations?: DestinationLine[];
  silences?: number;
  quota?: { remaining: number; at: string } | null;
  identityProviders?: ProviderLine[];
}

/** What a view gets: where to draw, who is signed in, and the rest of its address. */
export interface View {
  root: HTMLElement;
  who: WhoAmI;
  can(scope: Scope): boolean;
  /**
   * The tenants (ids) the client is bound to; undefined when a grant binds it to none, so it sees
   * every tenant. Empty: bound to the top-level sources alone.
   */
  tenants?: ReadonlySet<number>;
  /** The address's path after the view's name, decoded (`#/alerts/<key>` gives `[key]`). */
  path: string[];
  params: URLSearchParams;
}
