/**
 * Three tenants of one organization × 20 event streams each, on real dynalite and the emulator over
 * HTTP with the organization's rate tiers on (ten times the real ones, to stay quick: the ratios
 * are what count), one API key exchanged once per tenant: the shared governor keeps all of them
 * within the one rate (no 429), the tenants take turns (none waits behind another's streams), and
 * every stream of every tenant is polled, each of its events alerted once.
 */
import { describe, expect, it } from 'vitest';
import { ORGANIZATION_API_KEY } from '../../lib/emulator/dataset.ts';
import { tenantOfStream } from '../../lib/poll/ids.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type Receiver, useReceivers } from '../helpers/receiver.ts';
import { makeWorld } from '../helpers/world.ts';

const BASIC = 40;
const SEARCH = 10;
const GROUPS = 19;
const emu = useEmulator({
  eventsPerTenant: 8,
  lateMatchesPerTenant: 0,
  credentials: 0,
  groupsPerTenant: GROUPS,
  rateLimits: { basicPerSecond: BASIC, searchPerSecond: SEARCH },
});
const db = useDynalite();
const receivers = useReceivers();

const TENANTS = [1002, 1003, 1004];

describe('three tenants × 20 streams, one organization', () => {
  it('within the shared rate (no 429), the tenants taking turns, every stream polled and every event once', async () => {
    const hook: Receiver = await receivers();
    const dataset = emu.running.emulator.dataset;
    const config = {
      tenants: TENANTS.map((id) => ({
        id,
        name: dataset.tenant(id).name,
        sources: {
          tenantEvents: { lookback: 'P30D' },
          identifierGroups: dataset
            .tenant(id)
            .groups.slice(0, GROUPS)
            .map((g) => ({ id: g.id, lookback: 'P30D' })),
        },
      })),
      destinations: { siem: { type: 'webhook', url: hook.url } },
      routes: [{ name: 'all', to: ['siem'] }],
      upstream: { requestsPerSecond: BASIC, searchRequestsPerSecond: SEARCH },
    };
    const world = await makeWorld(emu, db, config, { apiKey: ORGANIZATION_API_KEY.key, governed: true });
    emu.running.emulator.control.resetRateStats();
    const summary = await world.cycle('events', 60);
    const stats = emu.running.emulator.control.rateStats();
    expect(stats.refused).toBe(0);
    for (const org of stats.organizations) expect(org.basic.maxAdmittedPerWindow).toBeLessThanOrEqual(BASIC);
    // 20 streams a tenant, every one polled to its end.
    expect(summary.streams).toHaveLength(60);
    expect(summary.streams.every((s) => s.status === 'done')).toBe(true);
    // In turns: every run of three streams holds one of each tenant.
    const order = summary.streams.map((s) => tenantOfStream(s.stream));
    for (let i = 0; i < order.length; i += 3) expect(new Set(order.slice(i, i + 3)).size).toBe(3);
    // One token exchange per tenant, each with the tenant it asked for.
    expect(emu.running.emulator.control.calls('generateToken')).toHaveLength(3);
    const sent = hook.requests.flatMap((r) =>
      (r.json() as { tenant: { id: number }; items: { metadata: { uid: string } }[] }).items.map(
        (i) => `${(r.json() as { tenant: { id: number } }).tenant.id}:${i.metadata.uid}`,
      ),
    );
    const expected = TENANTS.flatMap((id) =>
      dataset.tenant(id).events.map((e) => `${id}:${e.item.metadata.uid}`),
    );
    expect(new Set(sent).size).toBe(sent.length);
    expect([...sent].sort()).toEqual([...new Set(expected)].sort());
  });
});
