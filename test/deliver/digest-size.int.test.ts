/**
 * Digests of any size, end to end: pending deliveries in real dynalite, the real delivery pass,
 * real local HTTP receivers for Slack, e-mail and a webhook. With maxItems 1,000 and 1,000 due,
 * Slack gets one message within its limits that counts what it does not list, e-mail one message
 * listing all 1,000, the webhook every item; with threshold 1,000 and 1,500 due, the pass still
 * sends one digest, not 1,500 messages (it used to read and decide 500 at a time).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runDeliveryPass } from '../../lib/deliver/pass.ts';
import type { EmailContent } from '../../lib/destinations/email/render.ts';
import type { SlackPayload } from '../../lib/destinations/slack/limits.ts';
import { slackLimitProblems } from '../../lib/destinations/slack/limits.ts';
import type { WebhookBody } from '../../lib/destinations/webhook/render.ts';
import { readEnvironment } from '../../lib/env.ts';
import { memoryLogger } from '../../lib/log.ts';
import { MemoryMetrics } from '../../lib/metrics.ts';
import type { ItemKind } from '../../lib/model.ts';
import { SAMPLE_PASSWORD, sampleCredential, sampleEvent } from '../../lib/render/samples.ts';
import { applyPasswordPolicy } from '../../lib/rules/passwords.ts';
import { createRuntime, type Runtime } from '../../lib/runtime.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { configFrom } from '../helpers/world.ts';

const db = useDynalite();
const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

const severities = ['critical', 'high', 'medium', 'low', 'info'] as const;

/** The n-th distinct item of a kind, passwords masked as the poller stores them. */
function item(kind: ItemKind, n: number, now: Date): { key: string; item: unknown } {
  if (kind === 'credential') {
    const base = sampleCredential(now);
    const credential = applyPasswordPolicy(
      { ...base, id: 500_000 + n, identity_name: `user${n}@example.com` },
      'masked',
    );
    return { key: String(credential.id), item: credential };
  }
  const base = sampleEvent(now);
  const uid = `forum_post/big/thread/${n}`;
  const severity = severities[n % severities.length]!;
  return {
    key: uid,
    item: { ...base, metadata: { ...base.metadata, uid, severity }, tenant_metadata: undefined },
  };
}

/** A runtime on a fresh table with `count` deliveries of `kind` pending for each destination. */
async function pending(kind: ItemKind, count: number, digest: { threshold: number; maxItems: number }) {
  const slack = await startReceiver({ status: 200, body: 'ok' });
  const mail = await startReceiver({ status: 202, body: '' });
  const hook = await startReceiver({ status: 200, body: 'ok' });
  receivers.push(slack, mail, hook);
  const destinations = {
    slack: { type: 'slack', url: slack.url },
    mail: {
      type: 'email',
      provider: 'generic',
      url: mail.url,
      from: 'a@example.com',
      to: ['soc@example.com'],
    },
    hook: { type: 'webhook', url: hook.url },
  };
  const table = await db.table();
  const runtime: Runtime = await createRuntime({
    env: readEnvironment({
      EXPOSURE_API_URL: 'http://127.0.0.1:9',
      EXPOSURE_API_TOKEN: 'unused',
      TABLE_NAME: table,
      DYNAMODB_ENDPOINT: db.endpoint,
    }),
    config: configFrom({
      destinations,
      routes: [{ name: 'all', match: {}, to: Object.keys(destinations) }],
      digest,
    }),
    secrets: {},
    logger: memoryLogger('info'),
    metrics: new MemoryMetrics(),
    dynamo: db.client,
    write: () => {},
    // The console's index of the seeded items is not what is checked here: a third of the setup's
    // writes (an item's detail and list packs for each), and nothing the pass reads or sends.
    optimisations: { alertIndex: false },
  });
  const now = new Date();
  const items = Array.from({ length: count }, (_, n) => item(kind, n, now));
  const { created } = await runtime.records.recordPage(
    Object.keys(destinations).flatMap((destination) =>
      items.map(({ key, item }) => ({
        destination,
        kind,
        key,
        item,
        source: kind === 'event' ? 'tenant' : 'credentials:example.com',
        routes: ['all'],
        status: 'pending' as const,
      })),
    ),
    // The table is fresh, so nothing exists yet: written in batches, as an exclusive page is, not
    // one conditional put each (the same stored records, a third of the setup's time).
    { exclusive: true },
  );
  expect(created).toHaveLength(count * 3);
  const pass = () => runDeliveryPass(runtime.deliver, { deadline: Date.now() + 60_000 });
  return { runtime, slack, mail, hook, pass, keys: items.map((i) => i.key) };
}

function expectSlackDigest(body: SlackPayload, total: number) {
  expect(slackLimitProblems(body)).toEqual([]);
  const all = JSON.stringify(body);
  expect(all).not.toMatch(/more blocks not shown/);
  const listed = body.blocks
    .filter((b) => b.type === 'section' && b.text)
    .flatMap((b) => (b.text as { text: string }).text.split('\n'))
    .filter((line) => /^(:\w+: \*[A-Z]+\*|• )/.test(line)).length;
  const rest = /… and (\d+) more items? not listed \((\d+) in all\)/.exec(all);
  expect(rest, 'the rest is counted in the same message').not.toBeNull();
  expect(listed).toBeGreaterThan(0);
  expect(listed + Number(rest![1])).toBe(total);
  expect(Number(rest![2])).toBe(total);
}

describe.each(['event', 'credential'] as const)('1,000 %ss due, maxItems 1,000', (kind) => {
  it('one Slack message within its limits, one mail listing all 1,000, every item to the webhook', async () => {
    const world = await pending(kind, 1_000, { threshold: 5, maxItems: 1_000 });
    const summary = await world.pass();
    expect(summary.sent).toBe(3_000);
    expect(summary.retrying + summary.dead).toBe(0);

    expect(world.slack.requests).toHaveLength(1);
    expectSlackDigest(world.slack.requests[0]!.json() as SlackPayload, 1_000);

    expect(world.mail.requests).toHaveLength(1);
    const mail = world.mail.requests[0]!.json() as EmailContent;
    expect(mail.html.match(/<li>/g)).toHaveLength(1_000);
    expect(mail.text.split('\n').filter((l) => l.startsWith('- '))).toHaveLength(1_000);
    expect(mail.text).not.toMatch(/not listed/);

    const bodies = world.hook.requests.map((r) => r.json() as WebhookBody);
    const keys = bodies.flatMap((b) =>
      b.items.map((i) =>
        kind === 'event'
          ? (i as { metadata: { uid: string } }).metadata.uid
          : String((i as { id: number }).id),
      ),
    );
    expect(keys.sort()).toEqual([...world.keys].sort());

    for (const r of [...world.slack.requests, ...world.mail.requests, ...world.hook.requests]) {
      expect(r.body).not.toContain(SAMPLE_PASSWORD);
    }
    expect(await world.runtime.deliveries.list({ status: 'pending', limit: 10 })).toEqual([]);
  }, 120_000);
});

it('threshold 1,000 with 1,500 due: one digest per destination, not 1,500 messages', async () => {
  const world = await pending('event', 1_500, { threshold: 1_000, maxItems: 1_000 });
  const summary = await world.pass();
  expect(summary.sent).toBe(4_500);
  expect(world.slack.requests).toHaveLength(1);
  expectSlackDigest(world.slack.requests[0]!.json() as SlackPayload, 1_500);
  expect(world.mail.requests).toHaveLength(1);
  const mail = world.mail.requests[0]!.json() as EmailContent;
  expect(mail.html.match(/<li>/g)).toHaveLength(1_000);
  expect(mail.text).toContain('… and 500 more items not listed (1500 in all).');
  const items = world.hook.requests.flatMap((r) => (r.json() as WebhookBody).items);
  expect(items).toHaveLength(1_500);
}, 120_000);
