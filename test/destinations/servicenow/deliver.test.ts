/**
 * ServiceNow through the whole product (the emulator and dynalite over HTTP, the ServiceNow
 * stand-in): one incident per event with its `correlation_id`, urgency and impact from severity;
 * a crash between the 201 and our record makes no second incident; each refusal class; no password;
 * a follow-up work note.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followUp } from '../../../lib/deliver/follow-up.ts';
import { followUpTargets } from '../../../lib/deliver/follow-up-targets.ts';
import { eventSeverity } from '../../../lib/model.ts';
import type { EventItem } from '../../../lib/upstream/schemas.ts';
import { skipClock } from '../../helpers/clock.ts';
import { useDynalite } from '../../helpers/dynamo.ts';
import { useEmulator } from '../../helpers/emulator.ts';
import { crashingOnce, expectNoPassword, oneDestination } from '../../helpers/one-destination.ts';
import { type ServiceNowStandIn, SN_PASSWORD, SN_USER, startServiceNow } from '../../helpers/servicenow.ts';
import { makeWorld } from '../../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 4, lateMatchesPerTenant: 0, credentials: 60 });
const db = useDynalite();
let sn: ServiceNowStandIn;
beforeAll(async () => {
  sn = await startServiceNow();
});
afterAll(() => sn.close());

const events = () =>
  emu.running.emulator.dataset.tenant('acme').events.map((e) => e.item as unknown as EventItem);

async function setUp(
  options: { password?: string; credentials?: boolean; passwords?: string; threshold?: number } = {},
) {
  sn.incidents.length = 0;
  sn.calls.length = 0;
  return makeWorld(
    emu,
    db,
    oneDestination(
      'itsm',
      {
        type: 'servicenow',
        url: sn.url,
        username: SN_USER,
        password: { secret: 'sn' },
        assignmentGroup: 'SOC',
      },
      { credentials: options.credentials, passwords: options.passwords, threshold: options.threshold },
    ),
    { secrets: { sn: options.password ?? SN_PASSWORD }, clock: skipClock() },
  );
}

describe('ServiceNow', () => {
  it('one incident per event: its correlation_id, urgency and impact from severity, the assignment group', async () => {
    const world = await setUp();
    await world.cycle('events');
    expect(sn.incidents).toHaveLength(events().length);
    for (const incident of sn.incidents) {
      expect(String(incident.fields.correlation_id)).toMatch(/^exposure-[0-9a-f]{16}$/);
      expect(incident.fields.assignment_group).toBe('SOC');
      expect(String(incident.fields.short_description).length).toBeLessThanOrEqual(160);
    }
    const critical = events().find((e) => eventSeverity(e) === 'critical' || eventSeverity(e) === 'high');
    if (critical) {
      const incident = sn.incidents.find((i) => String(i.fields.description).includes(critical.metadata.uid));
      expect(incident?.fields.urgency).toBe('1');
    }
    const sent = await world.runtime.deliveries.list({ status: 'sent', destinations: ['itsm'] });
    expect(new Set(sent.map((r) => r.ticket))).toEqual(new Set(sn.incidents.map((i) => i.sys_id)));
  });

  it('a crash between the 201 and our record: 5 minutes later, the correlation_id finds it; no second incident', async () => {
    const world = await setUp();
    await crashingOnce(world, () => world.cycle('events'));
    await world.runtime.deliver.clock.sleep(5 * 60_000 + 1_000);
    await world.deliver();
    expect(sn.incidents).toHaveLength(events().length);
    expect(sn.calls.filter((c) => c.method === 'GET')).toHaveLength(1);
  });

  it('a 400 is dead with ServiceNow’s message; a wrong password is dead and the destination refusing', async () => {
    const world = await setUp();
    sn.script({ status: 400, body: { error: { message: 'Invalid category', detail: 'not a choice' } } });
    await world.cycle('events');
    const dead = await world.runtime.deliveries.list({ status: 'dead', destinations: ['itsm'] });
    expect(dead[0]?.lastError).toBe('HTTP 400 Invalid category: not a choice');
    const refused = await setUp({ password: 'wrong' });
    await refused.cycle('events');
    expect((await refused.runtime.destinationState.peek('itsm')).refused).toBeDefined();
    expect(sn.incidents).toHaveLength(0);
  });

  it('a 5xx is an unknown outcome: 5 minutes on, a query that finds nothing, then the create', async () => {
    const world = await setUp();
    sn.script({ status: 503, body: { error: { message: 'Service Unavailable' } } });
    await world.cycle('events');
    expect(sn.incidents).toHaveLength(events().length - 1);
    await world.runtime.deliver.clock.sleep(5 * 60_000 + 1_000);
    await world.deliver();
    expect(sn.calls.filter((c) => c.method === 'GET')).toHaveLength(1);
    expect(sn.incidents).toHaveLength(events().length);
    expect(new Set(sn.incidents.map((i) => i.fields.correlation_id)).size).toBe(events().length);
  });

  it('a 429 pauses the destination without costing an attempt', async () => {
    const world = await setUp();
    sn.script({ status: 429, body: { error: { message: 'Too many requests' } } });
    const summary = await world.cycle('events');
    expect(summary.delivery.destinations[0]?.status).toBe('paused');
    const waiting = await world.runtime.deliveries.list({ status: 'pending', destinations: ['itsm'] });
    expect(waiting.length).toBeGreaterThan(0);
    expect(waiting.every((r) => r.attempts === 0)).toBe(true);
  });

  it('no password reaches an incident, masked or hidden', async () => {
    for (const passwords of ['masked', 'hidden']) {
      const world = await setUp({ credentials: true, passwords });
      await world.cycle('credentials');
      expect(sn.incidents.length).toBeGreaterThan(0);
      const text = JSON.stringify(sn.incidents);
      expectNoPassword(
        text,
        emu.running.emulator.dataset.credentials.filter((c) => c.domain === 'acme.test'),
      );
    }
  });

  it('a follow-up is a work note on the incident', async () => {
    const world = await setUp();
    await world.cycle('events');
    const uid = events()[0]?.metadata.uid as string;
    await followUp(
      {
        records: world.runtime.records,
        targets: async () => followUpTargets(world.runtime.destinations.values()),
        clock: world.runtime.deliver.clock,
      },
      {
        kind: 'event',
        key: uid,
        action: {
          id: 'n1',
          type: 'ignore',
          by: 'cli:ana',
          at: '2026-11-25T12:00:00Z',
          reason: 'test account',
        },
      },
    );
    await world.deliver();
    const incident = sn.incidents.find((i) => String(i.fields.description).includes(uid));
    expect(incident?.workNotes).toEqual([expect.stringContaining('Ignored by cli:ana')]);
    expect(incident?.workNotes[0]).toContain('Reason: test account');
  });

  it('a follow-up on an event of a digest incident: a work note naming it', async () => {
    const world = await setUp({ threshold: 2 });
    await world.cycle('events');
    expect(sn.incidents).toHaveLength(1);
    const uid = events()[1]?.metadata.uid as string;
    await followUp(
      {
        records: world.runtime.records,
        targets: async () => followUpTargets(world.runtime.destinations.values()),
        clock: world.runtime.deliver.clock,
      },
      {
        kind: 'event',
        key: uid,
        action: { id: 'n2', type: 'remediate', by: 'cli:ana', at: '2026-11-25T12:00:00Z' },
      },
    );
    await world.deliver();
    expect(sn.incidents[0]?.workNotes).toHaveLength(1);
    expect(
      sn.incidents[0]?.workNotes[0]?.startsWith(`About the event ${uid}:\nMarked remediated by cli:ana`),
    ).toBe(true);
  });
});
