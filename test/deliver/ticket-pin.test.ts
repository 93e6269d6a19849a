/**
 * A ticket whose create may have happened keeps its items and its label until that create is
 * settled, whatever changes meanwhile: an item due since (it goes into a ticket of its own), a
 * threshold that would now make single tickets, a silence made since, the create dying and being
 * re-queued. Real dynalite, the Jira and ServiceNow stand-ins over HTTP, a run that dies between
 * the 201 and its record, and a clock moved past the 5 minutes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exposureLabel, webhookIdempotencyKey } from '../../lib/render/keys.ts';
import { newSilenceId } from '../../lib/state/silences.ts';
import { skipClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { JIRA_EMAIL, JIRA_TOKEN, type JiraStandIn, startJira } from '../helpers/jira.ts';
import { crashingOnce } from '../helpers/one-destination.ts';
import { type ServiceNowStandIn, SN_PASSWORD, SN_USER, startServiceNow } from '../helpers/servicenow.ts';
import { type DeliveryWorld, deliveryWorld } from './seed.ts';

const db = useDynalite();
let jira: JiraStandIn;
let sn: ServiceNowStandIn;
beforeAll(async () => {
  [jira, sn] = await Promise.all([startJira(), startServiceNow()]);
});
afterAll(() => Promise.all([jira.close(), sn.close()]));

const FIVE_MINUTES = 5 * 60_000 + 1_000;
type Kind = 'jira' | 'servicenow';

function config(kind: Kind, threshold: number): Record<string, unknown> {
  return {
    sources: { tenantEvents: {} },
    destinations: {
      tickets:
        kind === 'jira'
          ? { type: 'jira', url: jira.url, email: JIRA_EMAIL, apiToken: { secret: 'j' }, project: 'SEC' }
          : { type: 'servicenow', url: sn.url, username: SN_USER, password: { secret: 's' } },
    },
    routes: [{ name: 'all', to: ['tickets'] }],
    digest: { threshold, maxItems: 20 },
  };
}

async function setUp(
  kind: Kind,
  options: { threshold?: number; table?: string; clock?: ReturnType<typeof skipClock> } = {},
) {
  if (!options.table) {
    jira.issues.length = 0;
    jira.calls.length = 0;
    sn.incidents.length = 0;
    sn.calls.length = 0;
  }
  const clock = options.clock ?? skipClock();
  const world = await deliveryWorld(db, config(kind, options.threshold ?? 3), {
    clock,
    secrets: { j: JIRA_TOKEN, s: SN_PASSWORD },
    ...(options.table ? { table: options.table } : {}),
  });
  return { world, clock };
}

/** The label of a ticket of exactly these delivery ids: a digest's, or one item's. */
function labelOf(ids: string[]): string {
  if (ids.length === 1) return exposureLabel(`tickets:${ids[0]?.split('~').slice(2).join('~')}`);
  return exposureLabel(`tickets:${webhookIdempotencyKey('tickets', ids)}`);
}

/** Each ticket made, by its label, in the order made. */
function tickets(kind: Kind): { id: string; label: string }[] {
  return kind === 'jira'
    ? jira.issues.map((i) => ({ id: i.key, label: i.labels[0] as string }))
    : sn.incidents.map((i) => ({ id: i.sys_id, label: String(i.fields.correlation_id) }));
}

/** The distinct links to the web app in the ticket made `n`th (a digest links each item). */
function links(kind: Kind, n: number): Set<string> {
  const description = JSON.stringify(
    kind === 'jira' ? jira.issues[n]?.description : sn.incidents[n]?.fields.description,
  );
  return new Set(description.match(/https?:[^"\s\\]+/g) ?? []);
}

/** The ticket each delivery is recorded in, and its status. */
async function recorded(world: DeliveryWorld, ids: string[]) {
  const records = await world.runtime.deliveries.getMany(ids);
  return ids.map((id) => [records.get(id)?.status, records.get(id)?.ticket]);
}

/** Four events go as one digest (threshold 3); the run dies after the ticket system's 201. */
async function digestOfFourCrashed(kind: Kind, threshold = 3) {
  const { world, clock } = await setUp(kind, { threshold });
  const four = await world.seed('tickets', 4);
  await crashingOnce(world, () => world.pass());
  expect(tickets(kind)).toEqual([{ id: expect.any(String), label: labelOf(four) }]);
  expect(links(kind, 0).size).toBe(4);
  return { world, clock, four, first: tickets(kind)[0]?.id };
}

describe.each(['jira', 'servicenow'] as const)('%s: a create of unknown outcome fixes its ticket', (kind) => {
  it('one more event due 5 minutes on: the four are found in their ticket, the fifth gets its own', async () => {
    const { world, clock, four, first } = await digestOfFourCrashed(kind);
    const fifth = await world.seed('tickets', 1, { from: 4 });
    await clock.sleep(FIVE_MINUTES);
    await world.pass();
    expect(tickets(kind).map((t) => t.label)).toEqual([labelOf(four), labelOf(fifth)]);
    const second = tickets(kind)[1]?.id;
    expect(await recorded(world, [...four, ...fifth])).toEqual([
      ...four.map(() => ['sent', first]),
      ['sent', second],
    ]);
  });

  it('within the 5 minutes, items due since go at once in tickets of their own; the four wait', async () => {
    const { world, clock, four, first } = await digestOfFourCrashed(kind);
    const more = await world.seed('tickets', 4, { from: 4 });
    await world.pass();
    // The four new ones: over the threshold, a digest of exactly them.
    expect(tickets(kind).map((t) => t.label)).toEqual([labelOf(four), labelOf(more)]);
    await clock.sleep(FIVE_MINUTES);
    await world.pass();
    expect(tickets(kind)).toHaveLength(2);
    expect((await recorded(world, four)).map(([, ticket]) => ticket)).toEqual(four.map(() => first));
  });

  it('a threshold raised since would make single tickets: the four stay one ticket, found', async () => {
    const { world, clock, four, first } = await digestOfFourCrashed(kind);
    const later = await setUp(kind, { threshold: 10, table: world.table, clock });
    const fifth = await later.world.seed('tickets', 1, { from: 4 });
    await clock.sleep(FIVE_MINUTES);
    await later.world.pass();
    expect(tickets(kind).map((t) => t.label)).toEqual([labelOf(four), labelOf(fifth)]);
    expect((await recorded(later.world, four)).map(([, ticket]) => ticket)).toEqual(four.map(() => first));
  });
});

describe('jira: a fixed ticket over a silence, a dead create, marks written in part', () => {
  it('a silence made after the crash holds back what is new, not the items of the ticket', async () => {
    const { world, clock, four, first } = await digestOfFourCrashed('jira');
    const fifth = await world.seed('tickets', 1, { from: 4 });
    const now = clock.now();
    await world.runtime.silences.create({
      id: newSilenceId(now),
      match: { kind: 'event' },
      until: new Date(now + 3_600_000).toISOString(),
      reason: 'maintenance',
      createdBy: 'cli:test',
      createdAt: new Date(now).toISOString(),
    });
    await world.pass();
    await clock.sleep(FIVE_MINUTES);
    await world.pass();
    expect(tickets('jira').map((t) => t.label)).toEqual([labelOf(four)]);
    expect(await recorded(world, [...four, ...fifth])).toEqual([
      ...four.map(() => ['sent', first]),
      ['silenced', undefined],
    ]);
  });

  it('a create that died of unknown outcomes, re-queued: its label is searched first, and the ticket found', async () => {
    const { world, clock } = await setUp('jira');
    const four = await world.seed('tickets', 4);
    jira.script({ status: 503 });
    await world.pass();
    for (let attempt = 2; attempt <= 8; attempt++) {
      await clock.sleep(FIVE_MINUTES);
      // The search finds nothing; the create is answered 503, the last one after Jira made the issue.
      jira.script({ status: 200, body: { issues: [] } }, { status: 503, applied: attempt === 8 });
      await world.pass();
    }
    expect((await recorded(world, four)).map(([status]) => status)).toEqual(four.map(() => 'dead'));
    expect(tickets('jira').map((t) => t.label)).toEqual([labelOf(four)]);
    const fifth = await world.seed('tickets', 1, { from: 4 });
    for (const id of four) expect(await world.runtime.deliveries.requeue(id)).toBe(true);
    await world.pass();
    await clock.sleep(FIVE_MINUTES);
    await world.pass();
    expect(tickets('jira').map((t) => t.label)).toEqual([labelOf(four), labelOf(fifth)]);
    expect((await recorded(world, four)).map(([, ticket]) => ticket)).toEqual(four.map(() => 'SEC-1'));
  });

  it('marks written on only part of a digest (a crash between writes): nothing is lost or made twice', async () => {
    const { world, clock } = await setUp('jira');
    const four = await world.seed('tickets', 4);
    // The create is sent only once every mark is written: these two were marked, the others not.
    const marked = [...(await world.runtime.deliveries.getMany(four.slice(0, 2))).values()].map((r) => ({
      ...r,
      sendingAt: new Date(clock.now()).toISOString(),
      ticketPin: { label: labelOf(four), items: 4 },
    }));
    await world.runtime.deliveries.save(marked);
    await world.pass();
    expect(tickets('jira').map((t) => t.label)).toEqual(four.slice(2).map((id) => labelOf([id])));
    await clock.sleep(FIVE_MINUTES);
    await world.pass();
    // Searched, not found: no create happened, so the two are batched afresh.
    expect(jira.calls.filter((c) => c.path === '/rest/api/3/search/jql')).toHaveLength(1);
    await world.pass();
    expect(
      tickets('jira')
        .map((t) => t.label)
        .sort(),
    ).toEqual(four.map((id) => labelOf([id])).sort());
    expect((await recorded(world, four)).every(([status]) => status === 'sent')).toBe(true);
  });
});
