/**
 * No password leaves in the clear: cleartext credentials go through the whole product (poll,
 * DynamoDB, every destination type, the console, the logs) under `masked` and under `hidden`, and
 * not one of their passwords appears anywhere.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skipClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { makeWorld } from '../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 5, credentials: 300 });
const db = useDynalite();
const names = ['slack', 'generic', 'sendgrid', 'postmark', 'hook'] as const;
const receivers = {} as Record<(typeof names)[number], Receiver>;

beforeAll(async () => {
  for (const name of names) {
    receivers[name] = await startReceiver(
      name === 'postmark' ? { status: 200, body: '{"ErrorCode":0}' } : { status: 200, body: 'ok' },
    );
  }
});
afterAll(async () => {
  for (const name of names) await receivers[name].close();
});

function config(passwords: 'masked' | 'hidden', threshold: number) {
  const email = (provider: string, url: string) => ({
    type: 'email',
    provider,
    url,
    apiKey: 'mail-api-key',
    from: 'alerts@example.com',
    to: ['soc@example.com'],
  });
  return {
    sources: { credentials: { domains: ['acme.test'], lookback: 'P60D', pageSize: 50 } },
    destinations: {
      slack: { type: 'slack', url: receivers.slack.url },
      generic: email('generic', receivers.generic.url),
      sendgrid: email('sendgrid', receivers.sendgrid.url),
      postmark: email('postmark', receivers.postmark.url),
      hook: { type: 'webhook', url: receivers.hook.url },
      terminal: { type: 'console' },
    },
    routes: [
      { name: 'all', match: {}, to: ['slack', 'generic', 'sendgrid', 'postmark', 'hook', 'terminal'] },
    ],
    passwords,
    digest: { threshold, maxItems: 20 },
  };
}

/** Cleartext passwords of the credentials the config watches. */
function cleartextPasswords(): string[] {
  return emu.running.emulator.dataset.credentials
    .filter((c) => /(^|\.)acme\.test$/.test(c.domain) && c.hash === c.password)
    .map((c) => c.password);
}

for (const policy of ['masked', 'hidden'] as const) {
  for (const threshold of [1_000, 3]) {
    describe(`passwords: ${policy}, ${threshold > 3 ? 'grouped' : 'digest'} messages`, () => {
      it('no cleartext password reaches any destination, the console, the logs or the table', async () => {
        for (const name of names) receivers[name].requests.length = 0;
        emu.running.emulator.control.addFault({ endpoint: 'globalCredentials', badItem: true, index: 1 });
        // The destinations' pace (a second between messages) is taken on this clock, not waited out.
        const clock = skipClock();
        const world = await makeWorld(emu, db, config(policy, threshold), { clock });
        const summary = await world.cycle('credentials');
        expect(summary.delivery.sent).toBeGreaterThan(0);
        expect(summary.streams.reduce((n, s) => n + s.quarantined, 0)).toBe(1);
        const passwords = cleartextPasswords();
        expect(passwords.length).toBeGreaterThan(10);
        expect(passwords.every((p) => p.length >= 6)).toBe(true);

        const sent = names.flatMap((n) => receivers[n].requests.map((r) => r.body));
        for (const n of names)
          expect(receivers[n].requests.length, `${n} received something`).toBeGreaterThan(0);
        const stored = (await world.runtime.deliveries.list({ limit: 10_000 })).map((r) =>
          JSON.stringify(r.item),
        );
        const quarantined = await world.runtime.quarantine.list('credentials:acme.test');
        const everything = [
          ...sent,
          ...world.console,
          ...world.logs,
          ...stored,
          ...quarantined.map((q) => q.rawJson),
        ].join('\n');
        expect(world.console.length).toBeGreaterThan(0);
        const leaked = passwords.filter((p) => everything.includes(p));
        expect(leaked).toEqual([]);
        if (policy === 'hidden') {
          const hookItems = receivers.hook.requests.flatMap(
            (r) => (r.json() as { items: Record<string, unknown>[] }).items,
          );
          expect(hookItems.length).toBeGreaterThan(0);
          expect(hookItems.every((i) => !('hash' in i))).toBe(true);
        } else {
          const hookItems = receivers.hook.requests.flatMap(
            (r) => (r.json() as { items: { hash: string }[] }).items,
          );
          expect(hookItems.every((i) => /^.\**.$|^\*+$/.test(i.hash))).toBe(true);
        }
      }, 30_000);
    });
  }
}
