/**
 * A password in a field the spec does not name never leaves in the clear: credentials whose
 * upstream answer carries an extra `password` (beside `hash`, and inside the item's `source`) go
 * through the whole product (the emulator behind a stand-in that adds the fields, over HTTP; the
 * poll cycle; dynalite; the webhook, Splunk, Sentinel and PagerDuty stand-ins) under `masked` and
 * `hidden`, and not one cleartext password arrives anywhere.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skipClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { type EmulatorFixture, useEmulator } from '../helpers/emulator.ts';
import { TEST_ROUTING_KEY, usePagerDutyReceivers } from '../helpers/pagerduty-receiver.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { SENTINEL_APP, type SentinelStandIn, startSentinel } from '../helpers/sentinel.ts';
import { HEC_TOKEN, type HecStandIn, startHec } from '../helpers/splunk.ts';
import { type StandIn, standIn } from '../helpers/stand-in.ts';
import { makeWorld } from '../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 2, credentials: 60 });
const db = useDynalite();
const pagerduty = usePagerDutyReceivers();
let hook: Receiver;
let hec: HecStandIn;
let az: SentinelStandIn;
let upstream: StandIn;

/** The cleartext password behind a credential id, which the emulator itself never serves. */
const cleartext = (id: unknown) =>
  emu.running.emulator.dataset.credentials.find((c) => c.id === id)?.password;

/**
 * The upstream as a service might answer off-spec: the emulator's answer, with each credential of
 * the global search given its cleartext in `password` and in its `source.password`.
 */
async function startExtraFieldsUpstream(): Promise<void> {
  upstream = await standIn(async (req, _body, res, raw) => {
    const answer = await fetch(`${emu.url}${req.url}`, {
      method: req.method,
      headers: { authorization: req.headers.authorization ?? '', 'content-type': 'application/json' },
      ...(raw.length ? { body: raw } : {}),
    });
    let text = await answer.text();
    if (answer.ok && req.url?.endsWith('/credentials/global/_search')) {
      const page = JSON.parse(text) as { items: Record<string, unknown>[] };
      for (const item of page.items) {
        item.password = cleartext(item.id);
        if (item.source) item.source = { ...(item.source as object), password: cleartext(item.id) };
      }
      text = JSON.stringify(page);
    }
    // fetch has decoded the body, and it may have grown: its length and encoding are ours to set.
    const headers = Object.fromEntries(answer.headers);
    delete headers['content-length'];
    delete headers['content-encoding'];
    delete headers['transfer-encoding'];
    res.writeHead(answer.status, headers);
    res.end(text);
  });
}

beforeAll(async () => {
  hook = await startReceiver();
  hec = await startHec();
  az = await startSentinel();
  await startExtraFieldsUpstream();
});
afterAll(async () => {
  await Promise.all([hook.close(), hec.close(), az.close(), upstream.close()]);
});

/** The emulator fixture, reached through the stand-in in front of it. */
const throughStandIn = (): EmulatorFixture => ({
  running: emu.running,
  url: upstream.url,
  client: (token, extra = {}) => emu.client(token, { baseUrl: upstream.url, ...extra }),
});

for (const policy of ['masked', 'hidden'] as const) {
  describe(`an extra password field on a credential, passwords: ${policy}`, () => {
    it('reaches no webhook, Splunk, Sentinel or PagerDuty in the clear', async () => {
      hook.requests.length = 0;
      hec.events.length = 0;
      az.records.length = 0;
      const pd = await pagerduty();
      const world = await makeWorld(
        throughStandIn(),
        db,
        {
          sources: {
            tenantEvents: { enabled: false },
            credentials: { domains: ['acme.test'], lookback: 'P60D', pageSize: 50 },
          },
          destinations: {
            hook: { type: 'webhook', url: hook.url },
            splunk: { type: 'splunk', url: hec.url, token: { secret: 'hec' } },
            sentinel: {
              type: 'sentinel',
              tenantId: SENTINEL_APP.tenantId,
              clientId: SENTINEL_APP.clientId,
              clientSecret: { secret: 'az' },
              endpoint: `${az.url}/`,
              ruleId: `dcr-extra-${policy}`,
              stream: 'Custom-ExposureAlerts_CL',
              loginUrl: az.url,
            },
            pager: { type: 'pagerduty', url: pd.url, routingKey: TEST_ROUTING_KEY },
          },
          routes: [{ name: 'all', to: ['hook', 'splunk', 'sentinel', 'pager'] }],
          passwords: policy,
          digest: { threshold: 1_000, maxItems: 20 },
        },
        { secrets: { hec: HEC_TOKEN, az: SENTINEL_APP.clientSecret }, clock: skipClock() },
      );
      const summary = await world.cycle('credentials');
      expect(summary.delivery.sent).toBeGreaterThan(0);

      // What each stand-in holds, item by item.
      const items = {
        hook: hook.requests.flatMap((r) => (r.json() as { items: Record<string, unknown>[] }).items),
        splunk: hec.events.map((e) => (e.event as { item: Record<string, unknown> }).item),
        sentinel: az.records.map((r) => r.Item as Record<string, unknown>),
        pager: pd.alerts.flatMap((a) => {
          const details = (a.event.payload as { custom_details: { items?: Record<string, unknown>[] } })
            .custom_details;
          return details.items ?? [details as Record<string, unknown>];
        }),
      };
      const passwords = items.hook.map((i) => cleartext(i.id) ?? '');
      expect(passwords.length).toBeGreaterThan(4);
      expect(passwords.every((p) => p.length >= 6)).toBe(true);
      for (const [name, got] of Object.entries(items)) {
        expect(got.length, `${name} received items`).toBeGreaterThan(0);
        for (const item of got) {
          expect(item.identity_name, `${name} got the credential itself`).toEqual(expect.any(String));
          const source = item.source as Record<string, unknown> | undefined;
          if (policy === 'hidden') {
            expect('password' in item || 'hash' in item, `${name}: no password field`).toBe(false);
            expect(source && 'password' in source, `${name}: no source.password`).toBeFalsy();
          } else {
            expect(item.password, `${name}: password masked`).toMatch(/^.\*+.$/);
            expect(source?.password, `${name}: source.password masked`).toMatch(/^.\*+.$/);
          }
        }
      }
      const sent = [
        ...hook.requests.map((r) => r.body),
        JSON.stringify(hec.events),
        JSON.stringify(az.records),
        ...pd.requests.map((r) => r.body),
        ...world.logs,
      ].join('\n');
      expect(passwords.filter((p) => sent.includes(p))).toEqual([]);
    }, 30_000);
  });
}
