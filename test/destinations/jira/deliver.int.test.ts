/**
 * Jira through the whole product (the emulator and dynalite over HTTP, the Jira stand-in of
 * test/helpers/jira.ts, which indexes a create only after a delay, as Jira's search does): one
 * issue per event with its label, and each answer read as Jira means it; a crash between Jira's 201
 * and our record makes no second issue; no password reaches an issue; a follow-up is a comment and
 * the done transition, on a digest's issue a comment only.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../lib/cli/run.ts';
import { followUp } from '../../../lib/deliver/follow-up.ts';
import { followUpTargets } from '../../../lib/deliver/follow-up-targets.ts';
import { deliveryId } from '../../../lib/state/records/record.ts';
import type { EventItem } from '../../../lib/upstream/schemas.ts';
import { skipClock } from '../../helpers/clock.ts';
import { useDynalite } from '../../helpers/dynamo.ts';
import { useEmulator } from '../../helpers/emulator.ts';
import { captureIo } from '../../helpers/io.ts';
import { adfProblem, JIRA_EMAIL, JIRA_TOKEN, type JiraStandIn, startJira } from '../../helpers/jira.ts';
import { crashingOnce, expectNoPassword, oneDestination } from '../../helpers/one-destination.ts';
import { makeWorld } from '../../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 4, lateMatchesPerTenant: 0, credentials: 60 });
const db = useDynalite();
let jira: JiraStandIn;
beforeAll(async () => {
  jira = await startJira({ indexDelayMs: 300 });
});
afterAll(() => jira.close());

const uids = () =>
  emu.running.emulator.dataset
    .tenant('acme')
    .events.map((e) => (e.item as unknown as EventItem).metadata.uid);

async function setUp(
  options: { token?: string; credentials?: boolean; passwords?: string; threshold?: number } = {},
) {
  jira.issues.length = 0;
  jira.calls.length = 0;
  return makeWorld(
    emu,
    db,
    oneDestination(
      'tickets',
      {
        type: 'jira',
        url: jira.url,
        email: JIRA_EMAIL,
        apiToken: { secret: 'jiraToken' },
        project: 'SEC',
        labels: ['exposure'],
        doneTransition: 'Done',
      },
      { credentials: options.credentials, passwords: options.passwords, threshold: options.threshold },
    ),
    { secrets: { jiraToken: options.token ?? JIRA_TOKEN }, clock: skipClock() },
  );
}

const label = (uid: string) =>
  `exposure-${createHash('sha256').update(`tickets:${uid}`).digest('hex').slice(0, 16)}`;

describe('Jira', () => {
  it('one issue per event: a one-line summary, an ADF description, its label; the record keeps the key', async () => {
    const world = await setUp();
    const summary = await world.cycle('events');
    expect(summary.delivery.sent).toBe(uids().length);
    expect(jira.issues).toHaveLength(uids().length);
    for (const uid of uids()) {
      const issue = jira.issues.find((i) => i.labels.includes(label(uid)));
      expect(issue?.labels).toEqual([label(uid), 'exposure']);
      expect(issue?.summary.length).toBeLessThanOrEqual(255);
      expect(adfProblem(issue?.description)).toBeUndefined();
      const record = (await world.runtime.deliveries.getMany([deliveryId('tickets', 'event', uid)])).get(
        deliveryId('tickets', 'event', uid),
      );
      expect(record?.ticket).toBe(issue?.key);
    }
  });

  it('a crash between Jira’s 201 and our record: after 5 minutes, a search finds the issue; no second one', async () => {
    const world = await setUp();
    await crashingOnce(world, () => world.cycle('events'));
    const created = jira.issues.length;
    // At once, and within 5 minutes: the create of unknown outcome waits; the others go.
    await world.deliver();
    const creates = () =>
      jira.calls.filter((c) => c.method === 'POST' && c.path === '/rest/api/3/issue').length;
    expect(creates()).toBe(uids().length);
    // Five minutes on (this test's clock), and once the stand-in's index has the issue (300 ms).
    await world.runtime.deliver.clock.sleep(5 * 60_000 + 1_000);
    await new Promise((r) => setTimeout(r, 400));
    const pass = await world.deliver();
    expect(pass.sent).toBe(1);
    expect(jira.issues).toHaveLength(uids().length);
    expect(creates()).toBe(uids().length);
    expect(jira.calls.some((c) => c.path === '/rest/api/3/search/jql')).toBe(true);
    expect(created).toBeGreaterThan(0);
    const sent = await world.runtime.deliveries.list({ status: 'sent', destinations: ['tickets'] });
    expect(new Set(sent.map((r) => r.ticket)).size).toBe(uids().length);
  });

  it('answers as Jira means them: 400 dead with its errors, 429 paused without an attempt', async () => {
    const world = await setUp();
    jira.script(
      { status: 400, body: { errorMessages: [], errors: { customfield_1: 'Field is required' } } },
      { status: 429, retryAfter: 30 },
    );
    const first = await world.cycle('events');
    const tickets = first.delivery.destinations.find((d) => d.destination === 'tickets');
    expect(tickets?.dead).toBe(1);
    expect(tickets?.status).toBe('paused');
    const dead = await world.runtime.deliveries.list({ status: 'dead', destinations: ['tickets'] });
    expect(dead[0]?.lastError).toContain('customfield_1: Field is required');
    const waiting = await world.runtime.deliveries.list({ status: 'pending', destinations: ['tickets'] });
    expect(waiting.every((r) => r.attempts === 0)).toBe(true);
  });

  it('a 5xx is an unknown outcome: tried again no sooner than 5 minutes, after a search that finds nothing', async () => {
    const world = await setUp();
    jira.script({ status: 503, body: { errorMessages: ['Service Unavailable'] } });
    const first = await world.cycle('events');
    expect(first.delivery.destinations[0]?.retrying).toBe(1);
    const [waiting] = await world.runtime.deliveries.list({ status: 'pending', destinations: ['tickets'] });
    const now = world.runtime.deliver.clock.now();
    expect(Date.parse(waiting?.nextAttemptAt ?? '') - now).toBeGreaterThan(4 * 60_000);
    expect(waiting?.sendingAt).toBeDefined();
    await world.runtime.deliver.clock.sleep(5 * 60_000 + 1_000);
    await world.deliver();
    expect(jira.calls.filter((c) => c.path === '/rest/api/3/search/jql')).toHaveLength(1);
    expect(jira.issues).toHaveLength(uids().length);
    expect(new Set(jira.issues.flatMap((i) => i.labels)).size).toBe(uids().length + 1);
  });

  it('a refused token: dead, and the destination refusing', async () => {
    const world = await setUp({ token: 'wrong' });
    const summary = await world.cycle('events');
    expect(summary.delivery.destinations[0]?.dead).toBeGreaterThan(0);
    expect((await world.runtime.destinationState.peek('tickets')).refused).toBeDefined();
    expect(jira.issues).toHaveLength(0);
  });

  it('no password reaches an issue, masked or hidden; the login does', async () => {
    for (const passwords of ['masked', 'hidden']) {
      const world = await setUp({ credentials: true, passwords });
      await world.cycle('credentials');
      expect(jira.issues.length).toBeGreaterThan(0);
      const text = JSON.stringify(jira.issues);
      expectNoPassword(
        text,
        emu.running.emulator.dataset.credentials.filter((c) => c.domain === 'acme.test'),
      );
      expect(text).toContain('Leaked credential:');
    }
  });

  it('a follow-up: a comment on the issue, then its done transition', async () => {
    const world = await setUp();
    await world.cycle('events');
    const uid = uids()[0] as string;
    const made = await followUp(
      {
        records: world.runtime.records,
        targets: async () => followUpTargets(world.runtime.destinations.values()),
        clock: world.runtime.deliver.clock,
      },
      {
        kind: 'event',
        key: uid,
        action: { id: 'a1', type: 'remediate', by: 'cli:ana', at: '2026-11-25T12:00:00Z', reason: 'patched' },
      },
    );
    expect(made.map((r) => r.destination)).toEqual(['tickets']);
    await world.deliver();
    const issue = jira.issues.find((i) => i.labels.includes(label(uid)));
    expect(JSON.stringify(issue?.comments)).toContain('Marked remediated by cli:ana');
    expect(JSON.stringify(issue?.comments)).toContain('Reason: patched');
    expect(issue?.status).toBe('Done');
  });

  it('a follow-up on an event of a digest issue: a comment naming it, and the issue stays open', async () => {
    const world = await setUp({ threshold: 2 });
    await world.cycle('events');
    expect(jira.issues).toHaveLength(1);
    const uid = uids()[0] as string;
    await followUp(
      {
        records: world.runtime.records,
        targets: async () => followUpTargets(world.runtime.destinations.values()),
        clock: world.runtime.deliver.clock,
      },
      {
        kind: 'event',
        key: uid,
        action: { id: 'd1', type: 'ignore', by: 'cli:ana', at: '2026-11-25T12:00:00Z' },
      },
    );
    const pass = await world.deliver();
    expect(pass.sent).toBe(1);
    const [issue] = jira.issues;
    expect(issue?.status).toBe('To Do');
    expect(jira.calls.filter((c) => c.path.endsWith('/transitions'))).toHaveLength(0);
    expect(JSON.stringify(issue?.comments)).toContain(`About the event ${uid}:`);
    expect(JSON.stringify(issue?.comments)).toContain('Ignored by cli:ana');
  });
});

describe('destinations test, Jira', () => {
  it('creates a marked test issue and prints its key', async () => {
    jira.issues.length = 0;
    const dir = await mkdtemp(join(tmpdir(), 'ea-jira-test-'));
    await writeFile(
      join(dir, 'alerts.config.json'),
      JSON.stringify({
        destinations: {
          tickets: {
            type: 'jira',
            url: jira.url,
            email: JIRA_EMAIL,
            apiToken: { secret: 't' },
            project: 'SEC',
          },
        },
        routes: [{ name: 'all', to: ['tickets'] }],
      }),
    );
    await writeFile(join(dir, 'secrets.json'), JSON.stringify({ t: JIRA_TOKEN }));
    const io = captureIo({
      ALERTS_CONFIG: join(dir, 'alerts.config.json'),
      SECRETS_FILE: join(dir, 'secrets.json'),
    });
    expect(await runCli(['destinations', 'test', 'tickets'], io), io.err).toBe(0);
    expect(io.out).toMatch(/^tickets \(jira\): ok \(HTTP 201\), issue SEC-1\n$/);
    expect(jira.issues[0]?.summary).toMatch(/^\[TEST\]/);
  });
});
