/**
 * What `status` needs to know of the config, kept in the table (one item, `catalog` / `config`):
 * the API has no config (it ships with the pollers), and finding streams or destinations in the
 * table itself would take a Scan. Every run that polls writes it once (runtime.ts), so it follows
 * each deploy: the streams of both kinds, the destinations, when the config's own silences end,
 * which destinations hear of actions (the API follows its actions up with them), the password
 * policy (the API's lookups show passwords as it says), and the identity providers (status lists them).
 */

import type { FollowUpTarget } from '../deliver/follow-up.ts';
import { batchGet, type TableIo } from './io.ts';
import { marshall, unmarshall } from './marshall.ts';
import { PutItemCommand } from './sdk.ts';

export interface Catalog {
  /** Stream ids, events then credentials, in the config's order. */
  streams: string[];
  destinations: string[];
  /** The `until` of each config silence: status counts those still ahead. */
  configSilences: string[];
  /** The destinations that hear of actions on what they were sent (deliver/follow-up.ts). */
  followUps: FollowUpTarget[];
  /** The config's password policy: lookups through the API show passwords as it says. */
  passwords?: 'masked' | 'hidden' | 'clear';
  /**
   * The config's `tenants`, by id and name: status groups the streams by them. With each, its
   * credential `domains`: a client bound to it may look up only those (api/tenancy.ts).
   */
  tenants?: { id: number; name: string; domains?: string[] }[];
  /** The top-level sources' credential `domains`, for a client bound to the top level. */
  domains?: string[];
  /**
   * Slack channels (by id) whose routes carry one tenant's items only: a lookup from that channel
   * runs as that tenant (docs/actions.md).
   */
  channels?: { channel: string; tenant: number }[];
  /** Each scope's identity providers, in config order: status lists them (docs/identity.md). */
  identity?: IdentityProviderRef[];
  writtenAt: string;
}

/** An identity provider of the config: its scope (a tenant's id, or `top`), its name and type. */
export interface IdentityProviderRef {
  scope: number | 'top';
  provider: string;
  type: string;
}

/** The identity providers a catalog lists, from a config: the top level's first, then each tenant's own. */
export function identityProvidersOf(config: {
  identity?: { providers: Record<string, { type: string }> } | undefined;
  tenants?:
    | { id: number; identity?: { providers: Record<string, { type: string }> } | undefined }[]
    | undefined;
}): IdentityProviderRef[] {
  const of = (scope: number | 'top', providers: Record<string, { type: string }> = {}) =>
    Object.entries(providers).map(([provider, p]) => ({ scope, provider, type: p.type }));
  return [
    ...of('top', config.identity?.providers),
    ...(config.tenants ?? []).flatMap((t) => of(t.id, t.identity?.providers)),
  ];
}

export const CATALOG_KEY = { pk: 'catalog', sk: 'config' } as const;

export class CatalogStore {
  constructor(private readonly io: TableIo) {}

  async write(catalog: Omit<Catalog, 'writtenAt'>): Promise<void> {
    this.io.onRequest?.('PutItem');
    await this.io.client.send(
      new PutItemCommand({
        TableName: this.io.tableName,
        Item: marshall({
          ...CATALOG_KEY,
          ...catalog,
          writtenAt: new Date(this.io.clock.now()).toISOString(),
        }),
      }),
    );
  }

  /** The catalog as stored, or undefined before any poller ran. */
  async read(): Promise<Catalog | undefined> {
    const [item] = await batchGet(this.io, [marshall(CATALOG_KEY)]);
    return CatalogStore.from(item ? unmarshall(item) : undefined);
  }

  /** The catalog, or undefined before any poller ran. */
  static from(item: Record<string, unknown> | undefined): Catalog | undefined {
    if (!item) return undefined;
    const strings = (v: unknown) =>
      Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [];
    return {
      streams: strings(item.streams),
      destinations: strings(item.destinations),
      configSilences: strings(item.configSilences),
      followUps: Array.isArray(item.followUps)
        ? item.followUps.flatMap((t: unknown) => {
            const { name, style, pagerduty, ticket } = (t ?? {}) as Record<string, unknown>;
            // No style: written by a poller from before targets said it, until the next one writes it.
            const was = ticket ? 'ticket' : pagerduty ? 'incident' : 'message';
            return typeof name === 'string'
              ? [{ name, style: (typeof style === 'string' ? style : was) as FollowUpTarget['style'] }]
              : [];
          })
        : [],
      ...(Array.isArray(item.tenants)
        ? {
            tenants: item.tenants.flatMap((t: unknown) => {
              const { id, name, domains } = (t ?? {}) as { id?: unknown; name?: unknown; domains?: unknown };
              return typeof id === 'number' && typeof name === 'string'
                ? [{ id, name, ...(listed(domains) ? { domains: listed(domains) } : {}) }]
                : [];
            }),
          }
        : {}),
      ...(listed(item.domains) ? { domains: listed(item.domains) } : {}),
      ...(Array.isArray(item.channels)
        ? {
            channels: item.channels.flatMap((c: unknown) => {
              const { channel, tenant } = (c ?? {}) as { channel?: unknown; tenant?: unknown };
              return typeof channel === 'string' && typeof tenant === 'number' ? [{ channel, tenant }] : [];
            }),
          }
        : {}),
      ...(Array.isArray(item.identity)
        ? {
            identity: item.identity.flatMap((p: unknown) => {
              const { scope, provider, type } = (p ?? {}) as Record<string, unknown>;
              return (scope === 'top' || typeof scope === 'number') &&
                typeof provider === 'string' &&
                typeof type === 'string'
                ? [{ scope, provider, type }]
                : [];
            }),
          }
        : {}),
      ...(item.passwords === 'masked' || item.passwords === 'hidden' || item.passwords === 'clear'
        ? { passwords: item.passwords }
        : {}),
      writtenAt: typeof item.writtenAt === 'string' ? item.writtenAt : '',
    };
  }
}

/** A stored list of strings, or undefined when it is not one (a catalog from before it was kept). */
function listed(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? (value as string[]) : undefined;
}
