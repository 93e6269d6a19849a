/**
 * Stream ids and item keys, one way for everything that names them: the cycle (streams.ts), the
 * dispatcher (turn.ts), routes and status. The top-level `sources` keep the ids and keys they
 * always had (`tenant`, `group:12`, `credentials:example.com`, the bare uid or id); the streams
 * of a `tenants` entry name their tenant (`tenant:1001`, `group:1001:12`,
 * `credentials:1001:example.com`), and so do their items' keys (`1001:<uid>`), so the same event
 * found for two tenants alerts each of them once (docs/configuration.md).
 */
import type { TenantRef } from '../model.ts';
import type { AlertsConfig, TenantConfig } from '../rules/config.ts';

export type { TenantRef };

/** The tenant stream: the top level's, or a `tenants` entry's. */
export const tenantStreamId = (tenant?: number) => (tenant === undefined ? 'tenant' : `tenant:${tenant}`);

/** The stream of an identifier group. */
export const groupStreamId = (groupId: number, tenant?: number) =>
  tenant === undefined ? `group:${groupId}` : `group:${tenant}:${groupId}`;

/** The stream of a credential domain (domains compare without case). */
export const credentialStreamId = (domain: string, tenant?: number) =>
  tenant === undefined
    ? `credentials:${domain.toLowerCase()}`
    : `credentials:${tenant}:${domain.toLowerCase()}`;

/** An item's key: its uid or id, after its tenant's id for a `tenants` entry. */
export const itemKey = (key: string, tenant?: number) => (tenant === undefined ? key : `${tenant}:${key}`);

/**
 * An item key split into its tenant (one of `tenants`) and the upstream's own uid or id. A key
 * whose prefix is not a configured tenant is a top-level item's, whole.
 */
export function splitKey(key: string, tenants: Iterable<number>): { tenant?: number; uid: string } {
  const m = /^(\d+):(.+)$/s.exec(key);
  if (m && new Set(tenants).has(Number(m[1]))) return { tenant: Number(m[1]), uid: m[2] as string };
  return { uid: key };
}

/** The `tenants` entry a stream id belongs to; undefined for the top-level sources. */
export function tenantOfStream(stream: string): number | undefined {
  const m = /^(?:tenant:(\d+)$|group:(\d+):\d+$|credentials:(\d+):)/.exec(stream);
  const id = m?.[1] ?? m?.[2] ?? m?.[3];
  return id === undefined ? undefined : Number(id);
}

/** Where streams come from: the top-level sources (no tenant), then each `tenants` entry. */
export interface Scope {
  tenant?: TenantRef;
  sources: AlertsConfig['sources'];
}

export function scopesOf(config: Pick<AlertsConfig, 'sources' | 'tenants'>): Scope[] {
  return [
    { sources: config.sources },
    ...(config.tenants ?? []).map((t: TenantConfig) => ({
      tenant: { id: t.id, name: t.name },
      sources: t.sources,
    })),
  ];
}

/** The `tenants` entry of an id, as alerts carry it. */
export function tenantRef(
  config: Pick<AlertsConfig, 'tenants'>,
  id: number | undefined,
): TenantRef | undefined {
  if (id === undefined) return undefined;
  const found = config.tenants?.find((t) => t.id === id);
  return found ? { id: found.id, name: found.name } : { id, name: String(id) };
}
