/**
 * The emulator's world: tenants with their tokens, identifiers, identifier groups, events and
 * assets, and the global store of leaked credentials. Everything is generated from a seed and an
 * anchor time, so the same seed gives the same items (uids, ids, text) on every run; timestamps
 * sit relative to the anchor so a lookback window always finds some.
 *
 * Some event text is hostile on purpose (`<!channel>`, fake links), as text from the wild is.
 *
 * Longer than 300 lines on purpose: the whole seeded world comes from one generator and one
 * random stream in one order, which is what makes a seed give the same dataset everywhere. Its
 * shapes are in dataset-types.ts, the tenants and word lists it draws from in seeds.ts.
 */
import { EVENT_TYPES, SEVERITIES, type Severity } from '../upstream/event-types.ts';
import type {
  DatasetGrowth,
  DatasetOptions,
  EmulatedCredential,
  EmulatedEvent,
  GlobalSource,
  Organization,
  Tenant,
  TenantIdentifier,
} from './dataset-types.ts';
import { createRandom, type Random } from './random.ts';
import {
  CREDENTIAL_DOMAINS,
  EXTRA_TENANT_SEEDS,
  FIRST,
  LAST,
  MSSP_API_KEY,
  ORGANIZATION_API_KEY,
  ORIGINS,
  REPEAT_VICTIM,
  REPEAT_VICTIM_DOMAIN,
  SOURCE_NAMES,
  TAGS,
  TENANT_SEEDS,
  type TenantSeed,
  WILD_TEXT,
  WORDS,
} from './seeds.ts';

export type * from './dataset-types.ts';
export { CREDENTIAL_DOMAINS, MSSP_API_KEY, ORGANIZATION_API_KEY, REPEAT_VICTIM } from './seeds.ts';

/** The most identifier groups per tenant (`groupsPerTenant`): extra group ids stay apart per tenant. */
export const MAX_GROUPS_PER_TENANT = 10_000;

const DAY = 86_400_000;

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** `2026-11-20T10:00:00.000+00:00`: the offset form the credential endpoints use. */
function isoWithOffset(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '+00:00');
}

export class Dataset {
  readonly seed: string | number;
  readonly anchor: number;
  readonly organizations: Organization[] = [];
  readonly tenants: Tenant[] = [];
  readonly sources: GlobalSource[] = [];
  readonly credentials: EmulatedCredential[] = [];
  private readonly random: Random;
  private liveCounter = 0;
  private readonly appended = new Map<number, EmulatedEvent[]>();

  constructor(options: DatasetOptions = {}) {
    this.seed = options.seed ?? 42;
    this.anchor = (options.anchor ?? new Date()).getTime();
    this.random = createRandom(this.seed);
    const quota = options.globalSearchQuota ?? 10_000;
    for (const id of new Set(TENANT_SEEDS.map((t) => t.organizationId))) {
      this.organizations.push({ id, quotaRemaining: quota });
    }
    this.buildSources();
    const groups = options.groupsPerTenant ?? 2;
    if (!Number.isInteger(groups) || groups < 0 || groups > MAX_GROUPS_PER_TENANT)
      throw new RangeError(`groupsPerTenant must be a whole number from 0 to ${MAX_GROUPS_PER_TENANT}`);
    TENANT_SEEDS.forEach((seed, index) => {
      const tenant = this.buildTenant(seed, index);
      this.sizeGroups(tenant, index, groups);
      this.tenants.push(tenant);
    });
    const eventsPerTenant = options.eventsPerTenant ?? 120;
    for (const tenant of this.tenants) this.fillEvents(tenant, eventsPerTenant);
    this.fillCredentials(options.credentials ?? 400);
    // After everything else, from their own random stream: the rest of the data is unchanged by them.
    const late = options.lateMatchesPerTenant ?? 3;
    if (late > 0) for (const tenant of this.tenants) this.addLateMatches(tenant, late);
    EXTRA_TENANT_SEEDS.forEach((seed, i) => {
      const r = createRandom(`${this.seed}:tenant:${seed.id}`);
      const tenant = this.buildTenant(seed, TENANT_SEEDS.length + i, r);
      this.sizeGroups(tenant, TENANT_SEEDS.length + i, groups);
      this.tenants.push(tenant);
      this.fillEvents(tenant, eventsPerTenant, r);
    });
  }

  /** What was appended since generation, to restore after a restart with {@link restore}. */
  growth(): DatasetGrowth {
    return {
      events: Object.fromEntries([...this.appended].map(([id, events]) => [String(id), events])),
      live: this.liveCounter,
    };
  }

  /** Appends again what an earlier run of the same seed had appended, with the same uids and seqs. */
  restore(growth: DatasetGrowth): void {
    for (const [id, events] of Object.entries(growth.events)) {
      const tenant = this.tenant(Number(id));
      for (const event of events) {
        if (event.seq <= (tenant.events.at(-1)?.seq ?? 0)) continue;
        tenant.events.push(event);
        this.remember(tenant.id, event);
      }
    }
    this.liveCounter = Math.max(this.liveCounter, growth.live);
  }

  private remember(tenantId: number, event: EmulatedEvent): void {
    const list = this.appended.get(tenantId) ?? [];
    list.push(event);
    this.appended.set(tenantId, list);
  }

  tenantByToken(token: string): Tenant | undefined {
    return this.tenants.find((t) => t.token === token);
  }

  tenantByApiKey(key: string): Tenant | undefined {
    return this.tenants.find((t) => t.apiKey === key);
  }

  /** The tenants an API key may act for, its default first; none for an unknown key. */
  tenantsOfApiKey(key: string): Tenant[] {
    if (key === MSSP_API_KEY.key) return MSSP_API_KEY.tenants.map((id) => this.tenant(id));
    if (key === ORGANIZATION_API_KEY.key) return ORGANIZATION_API_KEY.tenants.map((id) => this.tenant(id));
    const own = this.tenantByApiKey(key);
    return own ? [own] : [];
  }

  /**
   * Adds the same new events to several tenants at once (one piece of content matching each one's
   * identifiers): one uid, found for each. Returns them as the first tenant has them.
   */
  appendSharedEvents(tenantIds: readonly number[], count: number, at: Date = new Date()): EmulatedEvent[] {
    const [first, ...rest] = tenantIds;
    if (first === undefined) return [];
    const added = this.appendEvents(first, count, at);
    for (const id of rest) {
      const tenant = this.tenant(id);
      for (const event of added) {
        const copy = structuredClone(event);
        copy.seq = (tenant.events.at(-1)?.seq ?? 0) + 1;
        copy.item.identifiers = [tenant.identifiers[0] as TenantIdentifier];
        tenant.events.push(copy);
        this.remember(tenant.id, copy);
      }
    }
    return added;
  }

  organization(id: number): Organization {
    const found = this.organizations.find((o) => o.id === id);
    if (!found) throw new Error(`no emulated organization ${id}`);
    return found;
  }

  tenant(idOrSlug: number | string): Tenant {
    const found = this.tenants.find((t) => t.id === idOrSlug || t.slug === idOrSlug);
    if (!found) throw new Error(`no emulated tenant ${idOrSlug}`);
    return found;
  }

  private buildSources(): void {
    SOURCE_NAMES.forEach((name, i) => {
      const breached = this.anchor - (400 - i * 50) * DAY;
      this.sources.push({
        id: `src-${i + 1}`,
        name,
        description_en: `${name}, seen on illicit networks`,
        description_fr: `${name}, vu sur des réseaux illicites`,
        breached_at: i === 5 ? null : iso(breached),
        leaked_at: i === 4 ? null : iso(breached + 30 * DAY),
        is_alert_enabled: i !== 3,
      });
    });
  }

  private buildTenant(seed: TenantSeed, index: number, r: Random = this.random): Tenant {
    const base = (index + 1) * 10;
    const identifiers: TenantIdentifier[] = [
      { id: base + 1, name: seed.domain },
      { id: base + 2, name: seed.name },
      { id: base + 3, name: `ceo@${seed.domain}` },
      { id: base + 4, name: `vpn.${seed.domain}` },
    ];
    const organization = this.organization(seed.organizationId);
    const tenant: Tenant = {
      id: seed.id,
      slug: seed.slug,
      name: seed.name,
      organizationId: organization.id,
      userId: 500 + index,
      apiKeyId: 700 + index,
      userEmail: `analyst@${seed.domain}`,
      token: `emu-${seed.slug}-token`,
      apiKey: `emu-${seed.slug}-key`,
      accountTakeover: seed.accountTakeover,
      identifiers,
      groups: [
        { id: (index + 1) * 100 + 1, name: 'Executives', identifierIds: [base + 3] },
        { id: (index + 1) * 100 + 2, name: 'Infrastructure', identifierIds: [base + 1, base + 4] },
      ],
      groupIdentifiers: [],
      events: [],
      assets: new Map(),
      get quotaRemaining() {
        return organization.quotaRemaining;
      },
      set quotaRemaining(value: number) {
        organization.quotaRemaining = value;
      },
    };
    for (let k = 0; k < identifiers.length; k++) {
      const identifier = identifiers[k] as TenantIdentifier;
      const id = seed.id * 10 + k + 1;
      tenant.assets.set(id, {
        id,
        name: identifier.name,
        type: k === 0 || k === 3 ? 'domain' : k === 2 ? 'email' : 'keyword',
        data: { value: identifier.name },
        search_types: ['leak', 'paste', 'forum_post'],
        experimental_search_types: [],
        count: r.int(0, 500),
        data_updated_at: iso(this.anchor - k * DAY),
        feed_id: 9000 + id,
        fetching_progress: 100,
        is_disabled: false,
        risks: [1, 2, 3, 4, 5],
        source: 'USER',
        tenant_id: seed.id,
        urn: `urn:asset:${seed.id}:${id}`,
        v3_refs: { asset_uuid: `00000000-0000-4000-8000-${String(id).padStart(12, '0')}` },
      });
    }
    return tenant;
  }

  /**
   * Keeps the first `count` of the named groups, and adds the rest (`groupsPerTenant`). Draws
   * nothing from the random stream: a dataset with the default two groups is unchanged.
   */
  private sizeGroups(tenant: Tenant, index: number, count: number): void {
    tenant.groups.splice(count);
    const domain = tenant.identifiers[0]?.name ?? 'example.test';
    for (let n = tenant.groups.length + 1; n <= count; n++) {
      const id = (index + 1) * 100_000 + n;
      let identifierIds: number[];
      if (n % 10 === 0) {
        identifierIds = [(tenant.identifiers[(n / 10) % tenant.identifiers.length] as TenantIdentifier).id];
      } else {
        const own = { id: (index + 1) * 1_000_000 + n, name: `team-${n}.${domain}` };
        tenant.groupIdentifiers.push(own);
        identifierIds = [own.id];
      }
      tenant.groups.push({ id, name: `Group ${n}`, identifierIds });
    }
  }

  private makeEvent(
    tenant: Tenant,
    seq: number,
    createdAt: number,
    type: string,
    severity: Severity,
    live: boolean,
    r: Random = this.random,
  ) {
    const origin = r.pick(ORIGINS);
    const recordId = live
      ? `live-${createdAt.toString(36)}-${(this.liveCounter++).toString(36)}`
      : r.chance(0.3)
        ? `thread/${r.int(1000, 9999)}/post/${seq}`
        : `${tenant.slug}-${seq}-${r.hex(6)}`;
    const uid = `${type}/${origin}/${recordId}`;
    const identifiers = [r.pick(tenant.identifiers)];
    if (r.chance(0.3)) {
      const other = r.pick(tenant.identifiers);
      if (other.id !== identifiers[0]?.id) identifiers.push(other);
    }
    // Only with extra groups (`groupsPerTenant`), so the default dataset draws as it always did.
    if (tenant.groupIdentifiers.length && r.chance(0.2)) identifiers.push(r.pick(tenant.groupIdentifiers));
    const domain = tenant.identifiers[0]?.name ?? 'example.test';
    const tags = TAGS.filter(() => r.chance(0.15));
    const override = r.chance(0.15) ? r.pick(SEVERITIES) : undefined;
    const text = r.chance(0.2)
      ? r.pick(WILD_TEXT).replaceAll('{domain}', domain)
      : `mention of ${domain} in a ${type.replaceAll('_', ' ')}`;
    const marked = text.includes(domain)
      ? text.replace(domain, `<mark>${domain}</mark>`)
      : `${text} (<mark>${domain}</mark>)`;
    const matchedAt = createdAt + r.int(1, 120) * 60_000;
    const item: EmulatedEvent['item'] = {
      metadata: {
        estimated_created_at: iso(createdAt),
        matched_at: iso(Math.min(matchedAt, Math.max(createdAt, live ? createdAt : this.anchor))),
        type,
        uid,
        severity,
        ...(r.chance(0.7)
          ? { flare_url: `https://app.flare.io/#/${type}/${origin}/${encodeURIComponent(recordId)}` }
          : {}),
      },
      tenant_metadata: {
        severity: { original: severity, ...(override ? { override } : {}) },
        tags,
        notes: r.chance(0.1) ? 'checked by tier 1' : '',
      },
      identifiers,
      highlights: {
        content: [marked],
        ...(r.chance(0.3) ? { title: [`<mark>${identifiers[0]?.name}</mark>`] } : {}),
      },
    };
    return { seq, isIgnored: !live && r.chance(0.05), isRemediated: !live && r.chance(0.05), item };
  }

  private fillEvents(tenant: Tenant, count: number, r: Random = this.random): void {
    // Spread over the three days before the anchor, oldest first, so a 24 h lookback finds about a third.
    const span = 3 * DAY;
    for (let i = 0; i < count; i++) {
      const createdAt = this.anchor - span + Math.floor(((i + 1) * span) / (count + 1));
      // Cover every type and every severity before picking at random.
      const type = i < EVENT_TYPES.length ? (EVENT_TYPES[i] as string) : r.pick(EVENT_TYPES);
      const severity = i < SEVERITIES.length ? (SEVERITIES[i] as Severity) : r.pick(SEVERITIES);
      tenant.events.push(this.makeEvent(tenant, i + 1, createdAt, type, severity, false, r));
    }
  }

  /**
   * Old content matched in the hours before the anchor, placed in the feed by when it was matched
   * (the feed's order), so a walk meets it after older matches of newer content.
   */
  private addLateMatches(tenant: Tenant, count: number): void {
    const r = createRandom(`${this.seed}:late:${tenant.id}`);
    for (let i = 0; i < count; i++) {
      const createdAt = this.anchor - r.int(400, 2_500) * DAY;
      const event = this.makeEvent(tenant, 0, createdAt, r.pick(EVENT_TYPES), r.pick(SEVERITIES), false, r);
      event.item.metadata.matched_at = iso(this.anchor - r.int(10, 720) * 60_000);
      tenant.events.push(event);
    }
    tenant.events.sort((a, b) => a.item.metadata.matched_at.localeCompare(b.item.metadata.matched_at));
    tenant.events.forEach((event, i) => {
      event.seq = i + 1;
    });
  }

  /**
   * Adds new events at the end of a tenant's feed, as if just matched. Returns them. Their content
   * is at most 30 minutes old, or exactly `createdAt` (old content matched late). Each live event
   * draws from its own random stream, so after a restart (restore) new ones are new, not repeats.
   */
  appendEvents(
    tenantId: number,
    count: number,
    at: Date = new Date(),
    options: { createdAt?: Date } = {},
  ): EmulatedEvent[] {
    const tenant = this.tenant(tenantId);
    const added: EmulatedEvent[] = [];
    for (let i = 0; i < count; i++) {
      const seq = (tenant.events.at(-1)?.seq ?? 0) + 1;
      const r = createRandom(`${this.seed}:live:${this.liveCounter}`);
      const event = this.makeEvent(
        tenant,
        seq,
        options.createdAt?.getTime() ?? at.getTime() - r.int(0, 30) * 60_000,
        r.pick(EVENT_TYPES),
        r.pick(SEVERITIES),
        true,
        r,
      );
      event.item.metadata.matched_at = at.toISOString();
      tenant.events.push(event);
      this.remember(tenant.id, event);
      added.push(event);
    }
    return added;
  }

  private makeCredential(id: number, importedAt: number, domain?: string): EmulatedCredential {
    const r = this.random;
    const dom = domain ?? r.pick(CREDENTIAL_DOMAINS);
    const name = `${r.pick(FIRST)}.${r.pick(LAST)}${r.int(1, 99)}@${dom}`;
    const password = `${r.pick(WORDS)}${r.int(10, 9999)}${r.pick(['!', '#', '', '?'])}`;
    const kind = r.int(0, 4);
    const hashType = ['plaintext', 'unknown', 'sha1', 'bcrypt', null][kind] ?? null;
    const hash =
      hashType === 'plaintext' || hashType === 'unknown'
        ? password
        : hashType === 'sha1'
          ? r.hex(40)
          : hashType === 'bcrypt'
            ? `$2b$10$${r.hex(53)}`
            : password;
    const source = r.pick(this.sources);
    return {
      id,
      identity_name: name,
      domain: dom,
      hash,
      hash_type: hashType,
      imported_at: isoWithOffset(importedAt),
      source_id: source.id,
      credential_hash: r.hex(64),
      known_password_id: null,
      password,
    };
  }

  private fillCredentials(count: number): void {
    const span = 30 * DAY;
    for (let i = 0; i < count; i++) {
      const importedAt = this.anchor - span + Math.floor(((i + 1) * span) / (count + 1));
      const credential = this.makeCredential(100_000 + i + 1, importedAt);
      // One account found in leak after leak: what a lookup is for (`lookup account ...`).
      if (credential.domain === REPEAT_VICTIM_DOMAIN && i % 4 === 0) credential.identity_name = REPEAT_VICTIM;
      this.credentials.push(credential);
    }
  }

  /**
   * Adds newly imported credentials (optionally all for one domain). Returns them. With `logins`,
   * each credential names the next login of the list in turn (starting over at its end), so a
   * caller decides how many people the leaks are of (the identity bench: 1,000 leaks of 300); a
   * credential's `domain` is then its login's unless `domain` is given.
   */
  appendCredentials(
    count: number,
    options: { domain?: string; at?: Date; logins?: readonly string[] } = {},
  ): EmulatedCredential[] {
    const at = (options.at ?? new Date()).getTime();
    const logins = options.logins?.length ? options.logins : undefined;
    const added: EmulatedCredential[] = [];
    for (let i = 0; i < count; i++) {
      const id = (this.credentials.at(-1)?.id ?? 100_000) + 1;
      const login = logins?.[i % logins.length];
      const domain =
        options.domain ?? (login?.includes('@') ? login.slice(login.lastIndexOf('@') + 1) : undefined);
      const credential = this.makeCredential(id, at, domain);
      if (login !== undefined) credential.identity_name = login;
      this.credentials.push(credential);
      added.push(credential);
    }
    return added;
  }

  source(id: string): GlobalSource | undefined {
    return this.sources.find((s) => s.id === id);
  }
}
