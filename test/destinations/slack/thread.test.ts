/**
 * Digests to a Slack app become threads, through the whole product (the emulator and dynalite over
 * HTTP, the Slack Web API stand-in): one short parent in the channel, the items it does not list in
 * replies in its thread, every item exactly once across them; and a crash at every step boundary
 * (after Slack accepted the parent, after it accepted a reply, after the last reply but before the
 * records were marked) repeats at most the one message in flight, and loses nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventLink } from '../../../lib/render/link.ts';
import type { EventItem } from '../../../lib/upstream/schemas.ts';
import { skipClock } from '../../helpers/clock.ts';
import { useDynalite } from '../../helpers/dynamo.ts';
import { useEmulator } from '../../helpers/emulator.ts';
import {
  SLACK_CHANNEL,
  type SlackMessage,
  type SlackStandIn,
  startSlackApi,
} from '../../helpers/slack-api.ts';
import { makeWorld } from '../../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 12, lateMatchesPerTenant: 0, credentials: 120 });
const db = useDynalite();
let slack: SlackStandIn;
beforeAll(async () => {
  slack = await startSlackApi();
});
afterAll(() => slack.close());

const APP_URL = 'https://app.flare.io';
const text = (m: SlackMessage) => JSON.stringify(m.blocks);

function config(kind: 'events' | 'credentials', maxItems: number) {
  return {
    sources:
      kind === 'events'
        ? { tenantEvents: { lookback: 'P30D' } }
        : { tenantEvents: { enabled: false }, credentials: { domains: ['acme.test'], lookback: 'P60D' } },
    destinations: {
      soc: { type: 'slack', token: { secret: 'bot' }, channel: SLACK_CHANNEL, apiUrl: slack.url },
    },
    routes: [{ name: 'all', to: ['soc'] }],
    digest: { threshold: 1, maxItems },
  };
}

describe('a digest to a Slack app is a thread', () => {
  it('leaked logins: a short parent without logins, every login once in its thread', async () => {
    slack.reset();
    const world = await makeWorld(emu, db, config('credentials', 20), {
      secrets: { bot: slack.token },
      clock: skipClock(),
    });
    const summary = await world.cycle('credentials');
    const logins = summary.delivery.sent;
    expect(logins).toBeGreaterThan(5);
    const [parent, ...others] = slack.top();
    expect(others).toHaveLength(0);
    expect(text(parent as SlackMessage)).toContain('The logins are in the thread');
    expect(text(parent as SlackMessage)).not.toMatch(/@acme\.test/);
    const replies = slack.thread(parent?.ts ?? '');
    expect(replies.length).toBeGreaterThanOrEqual(1);
    const listed = replies.flatMap((r) => [...text(r).matchAll(/[a-z.]+\d+@[a-z.]+/g)].map((m) => m[0]));
    expect(listed).toHaveLength(logins);
    expect(new Set(listed).size).toBe(logins);
    // Every record is sent, at the parent's place, marked as in a digest.
    const records = await world.runtime.deliveries.list({
      status: 'sent',
      destinations: ['soc'],
      limit: 1000,
    });
    expect(records).toHaveLength(logins);
    expect(new Set(records.map((r) => `${r.posted?.ts} ${r.posted?.digest}`))).toEqual(
      new Set([`${parent?.ts} true`]),
    );
  });

  it('events: the parent lists the first maxItems and counts the rest; the thread lists the rest; each once', async () => {
    slack.reset();
    const world = await makeWorld(emu, db, config('events', 3), {
      secrets: { bot: slack.token },
      clock: skipClock(),
    });
    const summary = await world.cycle('events');
    const [parent] = slack.top();
    const all = [parent as SlackMessage, ...slack.thread(parent?.ts ?? '')].map(text).join('\n');
    const events = emu.running.emulator.dataset
      .tenant('acme')
      .events.map((e) => e.item as unknown as EventItem);
    expect(summary.delivery.sent).toBe(events.length);
    for (const event of events) {
      const link = (eventLink(event, APP_URL) ?? '').replace(/&/g, '&amp;');
      expect(all.split(link).length - 1, event.metadata.uid).toBe(1);
    }
    expect(text(parent as SlackMessage)).toContain(`and ${events.length - 3} more in the thread`);
  });

  it.each([
    ['parent-posted', 1, 0],
    ['reply-posted', 0, 1],
    ['accepted', 0, 0],
  ] as const)(
    'a crash after Slack accepted a message (%s) repeats at most that one; nothing is lost',
    async (step, parents, replies) => {
      slack.reset();
      const world = await makeWorld(emu, db, config('credentials', 20), {
        secrets: { bot: slack.token },
        clock: skipClock(),
      });
      let crashed = false;
      const crash = (at: string) => {
        if (at === step && !crashed) {
          crashed = true;
          throw new Error(`crash at ${at}`);
        }
      };
      world.runtime.deliver.threadCheckpoint = crash;
      world.runtime.deliver.checkpoint = crash;
      const first = await world.cycle('credentials');
      expect(crashed).toBe(true);
      expect(first.delivery.destinations.find((d) => d.destination === 'soc')?.status).toBe('failed');
      // The next pass resumes the thread where the crash left it.
      const second = await world.deliver();
      const records = await world.runtime.deliveries.list({
        status: 'sent',
        destinations: ['soc'],
        limit: 1000,
      });
      expect(second.destinations.find((d) => d.destination === 'soc')?.status).toBe('done');
      const logins = records.length;
      expect(logins).toBeGreaterThan(5);
      expect(slack.top()).toHaveLength(1 + parents);
      const parent = slack.top().at(-1) as SlackMessage;
      const thread = slack.thread(parent.ts);
      const listed = thread.flatMap((r) => [...text(r).matchAll(/[a-z.]+\d+@[a-z.]+/g)].map((m) => m[0]));
      // Every login in the thread of the parent the records point to, the repeated reply at most once more.
      expect(new Set(listed).size).toBe(logins);
      expect(listed.length - logins).toBeLessThanOrEqual(replies === 1 ? listed.length : 0);
      const repeatedReplies = thread.length - new Set(thread.map(text)).size;
      expect(repeatedReplies).toBe(replies);
      expect(new Set(records.map((r) => r.posted?.ts))).toEqual(new Set([parent.ts]));
    },
  );
});
