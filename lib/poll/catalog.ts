/**
 * What a run that polls tells `status` of its config (the catalog, kept in the table for the API,
 * which has no config): its streams, destinations, when its silences end, which destinations hear
 * of actions, the password policy, its identity providers, and its tenants with the Slack channels each one owns.
 */
import type { ResolvedDestination } from '../deliver/destinations.ts';
import { followUpTargets } from '../deliver/follow-up-targets.ts';
import { kindOf } from '../destinations/kinds.ts';
import type { AlertsConfig } from '../rules/config.ts';
import { identityProvidersOf } from '../state/catalog.ts';
import { streamIds } from './turn.ts';

/** What `status` needs of `config`: its streams, destinations and when its silences end. */
export function catalogOf(config: AlertsConfig, destinations: Iterable<ResolvedDestination>) {
  return {
    streams: [...streamIds(config, 'events'), ...streamIds(config, 'credentials')],
    destinations: Object.keys(config.destinations),
    configSilences: config.silences.map((s) => s.until),
    followUps: followUpTargets(destinations),
    passwords: config.passwords,
    ...(identityProvidersOf(config).length ? { identity: identityProvidersOf(config) } : {}),
    ...(config.sources.credentials?.domains.length ? { domains: config.sources.credentials.domains } : {}),
    ...(config.tenants?.length
      ? {
          tenants: config.tenants.map((t) => ({
            id: t.id,
            name: t.name,
            ...(t.sources.credentials?.domains.length ? { domains: t.sources.credentials.domains } : {}),
          })),
          channels: channelTenants(config),
        }
      : {}),
  };
}

/**
 * The app channels (by id: each kind's face says which, a Slack app's) whose every route names
 * `tenants` of one tenant: a lookup from such a channel runs as that tenant. A channel a route
 * without `tenants` feeds serves them all.
 */
export function channelTenants(config: AlertsConfig): { channel: string; tenant: number }[] {
  const out: { channel: string; tenant: number }[] = [];
  for (const [name, d] of Object.entries(config.destinations)) {
    const channel = kindOf(d.type).channel?.(d);
    if (!channel) continue;
    const routes = config.routes.filter((r) => r.to.includes(name));
    const ids = new Set<number | undefined>();
    for (const route of routes) {
      if (!route.match.tenants?.length) ids.add(undefined);
      for (const wanted of route.match.tenants ?? [])
        ids.add(
          config.tenants?.find(
            (t) => t.id === Number(wanted) || t.name.toLowerCase() === String(wanted).toLowerCase(),
          )?.id,
        );
    }
    const [only] = [...ids];
    if (ids.size === 1 && only !== undefined) out.push({ channel, tenant: only });
  }
  return out;
}
