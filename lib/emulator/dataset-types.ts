/**
 * The shapes of the emulator's world: organizations, tenants with their identifiers, groups, events
 * and assets, the global sources and leaked credentials, and the options a dataset is made with.
 * The generator that fills them is dataset.ts.
 */
import type { Severity } from '../upstream/event-types.ts';

export interface TenantIdentifier {
  id: number;
  name: string;
}

export interface IdentifierGroup {
  id: number;
  name: string;
  identifierIds: number[];
}

/**
 * An organization owns tenants: the rate limits and the monthly global-search quota are its, shared
 * by all its tenants.
 */
export interface Organization {
  id: number;
  /** Global searches left this month. */
  quotaRemaining: number;
}

export interface Tenant {
  id: number;
  slug: string;
  name: string;
  /** Globex and Initech share one organization, so sharing its limits and quota can be tested. */
  organizationId: number;
  userId: number;
  apiKeyId: number;
  userEmail: string;
  /** Static demo token; never expires. */
  token: string;
  /** API key for `POST /tokens/generate`. */
  apiKey: string;
  /** Access to the account and session takeover prevention module (endpoint 5). */
  accountTakeover: boolean;
  identifiers: TenantIdentifier[];
  groups: IdentifierGroup[];
  /** Identifiers of the extra groups (`groupsPerTenant`), named by some events beside the tenant's own. */
  groupIdentifiers: TenantIdentifier[];
  events: EmulatedEvent[];
  assets: Map<number, Record<string, unknown>>;
  /** The organization's quota, read and set through the tenant: its sibling tenants see the change. */
  quotaRemaining: number;
}

export interface EmulatedEvent {
  /** Position in the tenant's feed; the order of `order: "asc"`. */
  seq: number;
  isIgnored: boolean;
  isRemediated: boolean;
  item: Record<string, unknown> & {
    metadata: {
      uid: string;
      type: string;
      severity: Severity;
      estimated_created_at: string;
      matched_at: string;
    };
    tenant_metadata: {
      severity: { original: Severity; override?: Severity | null };
      tags: string[];
      notes: string;
    };
    identifiers: TenantIdentifier[];
    highlights: Record<string, string[]>;
  };
}

export interface GlobalSource {
  id: string;
  name: string;
  description_en: string;
  description_fr: string;
  breached_at: string | null;
  leaked_at: string | null;
  is_alert_enabled: boolean;
}

export interface EmulatedCredential {
  id: number;
  identity_name: string;
  domain: string;
  hash: string;
  hash_type: string | null;
  imported_at: string;
  source_id: string;
  credential_hash: string;
  known_password_id: null;
  /** The cleartext password behind the record, for the by-password search; never served as a field. */
  password: string;
}

export interface DatasetOptions {
  seed?: string | number;
  /** Timestamps are laid out before this instant; default now. */
  anchor?: Date;
  eventsPerTenant?: number;
  /**
   * Events per tenant whose content is years old but which the upstream matched in the last hours
   * (an old paste found today): the case a time bound on `estimated_created_at` would hide.
   */
  lateMatchesPerTenant?: number;
  credentials?: number;
  /** Global searches each organization has left this month at the start; default 10 000. */
  globalSearchQuota?: number;
  /**
   * Identifier groups per tenant; default 2 (Executives and Infrastructure). Past two, `Group N`
   * are added (ids `(tenant index + 1) * 100000 + N`, apart from the named ones): every tenth holds
   * one of the tenant's own identifiers, so its search returns a good share of the feed (a
   * backlog); the others hold an identifier of their own (`team-N.<domain>`), which about one
   * event in five also names, so each returns a few events or none. For many streams (scale).
   */
  groupsPerTenant?: number;
}

/** What a dataset gained after it was generated, to carry over a restart (Emulator `stateFile`). */
export interface DatasetGrowth {
  /** Events appended per tenant id, in feed order. */
  events: Record<string, EmulatedEvent[]>;
  /** Live events made so far: the next one draws new content. */
  live: number;
}
