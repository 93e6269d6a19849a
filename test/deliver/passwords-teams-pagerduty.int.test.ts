/**
 * No cleartext password reaches Teams or PagerDuty: cleartext credentials go through the whole
 * product (emulator over HTTP, poll cycle, dynalite, the stand-ins for both services) under
 * `masked` and `hidden`, as grouped messages and as digests. PagerDuty's `custom_details` is the
 * item: its `hash` is masked or absent, never the password. A Teams card shows no hash at all.
 * (test/deliver/passwords.int.test.ts does the same for the other destination types.)
 */
import { describe, expect, it } from 'vitest';
import { skipClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { TEST_ROUTING_KEY, usePagerDutyReceivers } from '../helpers/pagerduty-receiver.ts';
import { useTeamsReceivers } from '../helpers/teams-receiver.ts';
import { makeWorld } from '../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 2, credentials: 60 });
const db = useDynalite();
const teamsReceiver = useTeamsReceivers();
const pagerduty = usePagerDutyReceivers();

function cleartextPasswords(): string[] {
  return emu.running.emulator.dataset.credentials
    .filter((c) => /(^|\.)acme\.test$/.test(c.domain) && c.hash === c.password)
    .map((c) => c.password);
}

for (const policy of ['masked', 'hidden'] as const) {
  for (const threshold of [1_000, 2]) {
    describe(`passwords: ${policy}, ${threshold > 2 ? 'grouped' : 'digest'} messages`, () => {
      it('no cleartext password reaches Teams or PagerDuty', async () => {
        const teams = await teamsReceiver();
        const pd = await pagerduty();
        const world = await makeWorld(
          emu,
          db,
          {
            sources: { credentials: { domains: ['acme.test'], lookback: 'P60D', pageSize: 50 } },
            destinations: {
              teams: { type: 'teams', url: teams.url },
              pager: { type: 'pagerduty', url: pd.url, routingKey: TEST_ROUTING_KEY },
            },
            routes: [{ name: 'all', match: {}, to: ['teams', 'pager'] }],
            passwords: policy,
            digest: { threshold, maxItems: 20 },
          },
          // The destinations' pace (Teams a message a second, PagerDuty 500 ms) is taken on this
          // clock, not waited out.
          { clock: skipClock() },
        );
        const summary = await world.cycle('credentials');
        const passwords = cleartextPasswords();
        expect(passwords.length).toBeGreaterThanOrEqual(4);
        expect(passwords.every((p) => p.length >= 6)).toBe(true);
        expect(summary.delivery.sent).toBeGreaterThan(0);
        expect(teams.posted.length).toBeGreaterThan(0);
        expect(pd.alerts.length).toBeGreaterThan(0);
        const sent = [...teams.requests, ...pd.requests].map((r) => r.body).join('\n');
        expect(passwords.filter((p) => sent.includes(p))).toEqual([]);
        // What PagerDuty holds: the items, with their hash as the policy left it.
        const details = pd.alerts.map((a) => (a.event.payload as { custom_details: unknown }).custom_details);
        const items = details.flatMap((d) =>
          Array.isArray((d as { items?: unknown[] }).items) ? (d as { items: unknown[] }).items : [d],
        ) as { hash?: string; identity_name: string }[];
        expect(items.length).toBeGreaterThan(0);
        if (policy === 'hidden') expect(items.every((i) => !('hash' in i))).toBe(true);
        else expect(items.every((i) => /^.\**.$|^\*+$/.test(i.hash ?? ''))).toBe(true);
        // Teams shows the login and the kind of secret, never the hash, not even masked.
        const cards = JSON.stringify(teams.posted.map((p) => p.card));
        const masked = items.flatMap((i) => (i.hash && i.hash.length > 4 ? [i.hash] : []));
        expect(masked.filter((h) => cards.includes(h))).toEqual([]);
      }, 60_000);
    });
  }
}
