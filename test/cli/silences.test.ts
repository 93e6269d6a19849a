/**
 * `silences add|list|expire` and `status` through the real CLI runner against real dynalite: the
 * id printed, the list (and `--all` with the expired, marked), who did it (`cli:<user>`, `--by`),
 * the audit trail, every bad input named (exit 2, one line on stderr), `deliveries list` naming
 * the silence that held a delivery back, and `status` on an empty and on a busy table.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lib/cli/run.ts';
import type { Silence } from '../../lib/rules/silences.ts';
import { DynamoSilenceAudit } from '../../lib/state/audit.ts';
import type { Status } from '../../lib/state/status.ts';
import { deliveryWorld, TEST_ENV } from '../deliver/seed.ts';
import { BUSY_QUOTA, seedBusyTable } from '../helpers/busy.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { captureIo } from '../helpers/io.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';

const db = useDynalite();
let hook: Receiver;
beforeAll(async () => {
  hook = await startReceiver();
});
afterAll(() => hook.close());

async function cli(table: string, argv: string[], extra: Record<string, string> = {}) {
  const io = captureIo({ TABLE_NAME: table, DYNAMODB_ENDPOINT: db.endpoint, ...extra });
  const code = await runCli(argv, io);
  return { code, out: io.out, err: io.err };
}

const MATCH = '{"kind": "event", "severity": {"gte": "high"}}';

describe('silences through the CLI', () => {
  it('add prints the id; list shows it; expire ends it; list --all keeps it, marked', async () => {
    const table = await db.table();
    const added = await cli(table, [
      'silences',
      'add',
      '--match',
      MATCH,
      '--until',
      'PT4H',
      '--reason',
      'incident 4711',
    ]);
    expect(added).toMatchObject({ code: 0, err: '' });
    const id = added.out.trim();
    expect(id).toMatch(/^s-[0-9a-z]{9}-[0-9a-f]{6}$/);

    const listed = await cli(table, ['silences', 'list']);
    expect(listed.code).toBe(0);
    const user = `cli:${userInfo().username}`;
    // A table with headers, the match in matcher words, within 80 columns.
    const [header, row] = listed.out.split('\n');
    expect(header).toMatch(/^ {2}ID +ENDS +BY +MATCH +REASON$/);
    expect(row).toContain(id);
    expect(row).toMatch(/in 4 h +/);
    expect(row).toContain(user.slice(0, 8));
    expect(row).toContain('kind=event severity>=high');
    expect(row).toContain('incident 4711');
    for (const line of listed.out.split('\n')) expect(line.length).toBeLessThanOrEqual(80);

    const json = await cli(table, ['silences', 'list', '--json']);
    const [one] = JSON.parse(json.out) as Silence[];
    expect(one).toMatchObject({ id, createdBy: user, reason: 'incident 4711', match: { kind: 'event' } });

    const expired = await cli(table, ['silences', 'expire', id, '--by', 'alice']);
    expect(expired).toMatchObject({ code: 0, err: '' });
    expect(expired.out).toBe(`${id} expired\n`);

    expect((await cli(table, ['silences', 'list'])).out).toBe('no active silences\n');
    const all = await cli(table, ['silences', 'list', '--all', '--json']);
    expect(JSON.parse(all.out)).toEqual([{ ...one, expiredAt: expect.any(String), expiredBy: 'cli:alice' }]);

    const again = await cli(table, ['silences', 'expire', id]);
    expect(again.code).toBe(0);
    expect(again.out).toContain('had ended already; nothing changed');

    // Every change is in the audit trail: who, when, what.
    const audit = (await new DynamoSilenceAudit(db.client, table).list()).reverse();
    expect(audit.map((e) => [e.action, e.client, e.silenceId, e.outcome])).toEqual([
      ['add', user, id, 'ok'],
      ['expire', 'cli:alice', id, 'ok'],
      ['expire', user, id, 'already_ended'],
    ]);
    expect(audit[0]?.silence?.reason).toBe('incident 4711');
  });

  it('an empty match (every alert) and a timestamp without a zone are accepted, each with a warning', async () => {
    const table = await db.table();
    const until = new Date(Date.now() + 86_400_000).toISOString().slice(0, 16);
    const added = await cli(table, [
      'silences',
      'add',
      '--match',
      '{}',
      '--until',
      until,
      '--reason',
      'freeze',
    ]);
    expect(added.code).toBe(0);
    expect(added.err).toBe(
      `warning: match: empty, so this silence holds back every alert\nwarning: until: no time zone given; read as UTC (${until}:00.000Z)\n`,
    );
    expect(added.out).toMatch(/^s-/);
  });

  it('--by names who made it; --until takes a timestamp', async () => {
    const table = await db.table();
    const until = new Date(Date.now() + 86_400_000).toISOString();
    const added = await cli(table, [
      'silences',
      'add',
      '--match',
      '{"domains": ["acme.test"]}',
      '--until',
      until,
      '--reason',
      'resets',
      '--by',
      'bob',
      '--json',
    ]);
    expect(added.code).toBe(0);
    expect(JSON.parse(added.out)).toMatchObject({
      until,
      createdBy: 'cli:bob',
      match: { domains: ['acme.test'] },
    });
  });

  it.each([
    [
      ['silences', 'add', '--match', '{"severity": {"gte": "urgent"}}', '--until', 'PT1H', '--reason', 'x'],
      /match\.severity\.gte: expected one of info, low, medium, high, critical/,
    ],
    [
      ['silences', 'add', '--match', '{"colour": "red"}', '--until', 'PT1H', '--reason', 'x'],
      /match\.colour: unknown key/,
    ],
    [
      ['silences', 'add', '--match', '{types: [paste]}', '--until', 'PT1H', '--reason', 'x'],
      /--match is not valid JSON/,
    ],
    [
      ['silences', 'add', '--match', '{"types": ["paste"]}', '--reason', 'x'],
      /--until \(or --duration\) required/,
    ],
    [
      ['silences', 'add', '--match', '{"types": ["paste"]}', '--until', 'PT1H'],
      /--reason \(or --comment\) required/,
    ],
    [['silences', 'add', '--until', 'PT1H', '--reason', 'x'], /say what to silence: key=value matchers/],
    [['silences', 'add', 'types=paste', '--match', '{}', '--until', 'PT1H', '--reason', 'x'], /not both/],
    [
      ['silences', 'add', 'colour=red', '--until', 'PT1H', '--reason', 'x'],
      /colour=red: not a matcher of silences/,
    ],
    [
      ['silences', 'add', 'types=~pa.*', '--until', 'PT1H', '--reason', 'x'],
      /regular expressions are not matched/,
    ],
    [
      ['silences', 'add', 'types=paste', '--until', '2027-02-30T00:00:00Z', '--reason', 'x'],
      /February 2027 has 28 days/,
    ],
    [
      ['silences', 'add', 'types=paste', '--until', 'PT1H', '--reason', 'x', '--comment', 'y'],
      /--reason and --comment say the same/,
    ],
    [
      ['silences', 'add', '--match', '{"types": ["paste"]}', '--until', 'yesterday', '--reason', 'x'],
      /until: expected a timestamp/,
    ],
    [
      ['silences', 'add', '--match', '{"types": ["paste"]}', '--until', 'P2Y', '--reason', 'x'],
      /until: must be at most 366 days away/,
    ],
    [
      ['silences', 'add', '--match', '{"types": ["paste"]}', '--until', 'PT1H', '--reason', 'x', '--by', ''],
      /--by must be a name/,
    ],
    [['silences', 'expire', 'abc'], /id must be a silence id/],
    [['silences', 'expire'], /usage/],
  ])('%j → exit 2: %s', async (argv, message) => {
    const table = await db.table();
    const out = await cli(table, argv);
    expect(out.code).toBe(2);
    expect(out.err).toMatch(message);
    expect(out.err.trim().split('\n')).toHaveLength(1);
    expect(out.out).toBe('');
    expect((await cli(table, ['silences', 'list', '--all'])).out).toBe('no silences\n');
  });

  it('an unknown id is not found: exit 1, and the other ids given are still expired', async () => {
    const table = await db.table();
    const id = (
      await cli(table, ['silences', 'add', 'types=paste', '--until', '1h', '--reason', 'x'])
    ).out.trim();
    const out = await cli(table, ['silence', 'expire', 's-000000001-abcdef', id]);
    expect(out.code).toBe(1);
    expect(out.err).toBe('exposure-alerts: no silence with id s-000000001-abcdef\n');
    expect(out.out).toBe(`${id} expired\n`);
  });

  it('as amtool users type it: silence add with matchers, --duration, --comment, --author; query -q; expire several', async () => {
    const table = await db.table();
    const one = await cli(table, [
      'silence',
      'add',
      'types=paste,leak',
      'severity>=high',
      'tags=vip',
      'domains=acme.test',
      'domains=example.com',
      '--duration',
      '2h',
      '--comment',
      'INC-4711',
      '--author',
      'carol',
      '--json',
    ]);
    expect(one.code, one.err).toBe(0);
    expect(JSON.parse(one.out)).toMatchObject({
      match: {
        types: ['paste', 'leak'],
        severity: { gte: 'high' },
        tags: { any: ['vip'] },
        domains: ['acme.test', 'example.com'],
      },
      reason: 'INC-4711',
      createdBy: 'cli:carol',
    });
    const two = await cli(table, [
      'silences',
      'add',
      'kind=event',
      'severity=critical',
      '--until',
      '30m',
      '--reason',
      'y',
    ]);
    expect(two.code, two.err).toBe(0);
    // query filters by matchers and -q prints ids only, so expire $(silence query -q ...) works.
    const pastes = await cli(table, ['silence', 'query', '-q', 'types=paste']);
    expect(pastes.out).toBe(`${JSON.parse(one.out).id}\n`);
    const all = await cli(table, ['silences', 'query', '-q']);
    const ids = all.out.trim().split('\n');
    expect(ids).toHaveLength(2);
    const ended = await cli(table, ['silence', 'expire', ...ids]);
    expect(ended.code).toBe(0);
    expect(ended.out.trim().split('\n')).toHaveLength(2);
    expect((await cli(table, ['silences', 'list'])).out).toBe('no active silences\n');
  });

  it('deliveries list shows which silence held a delivery back', async () => {
    const config = {
      sources: { tenantEvents: {} },
      destinations: { siem: { type: 'webhook', url: hook.url } },
      routes: [{ name: 'all', to: ['siem'] }],
    };
    const dir = await mkdtemp(join(tmpdir(), 'ea-silences-'));
    const file = join(dir, 'alerts.config.json');
    await writeFile(file, JSON.stringify(config));
    const world = await deliveryWorld(db, config);
    await world.seed('siem', 2);
    const env = { ...TEST_ENV, ALERTS_CONFIG: file };
    const id = (
      await cli(world.table, [
        'silences',
        'add',
        '--match',
        '{"sources": ["tenant"]}',
        '--until',
        'PT1H',
        '--reason',
        'noisy tenant feed',
      ])
    ).out.trim();
    const pass = await cli(world.table, ['deliver', '--once'], env);
    expect(pass.code).toBe(0);
    expect(pass.out).toContain('2 held back by a silence');
    expect(hook.requests).toEqual([]);
    // Wide enough for the whole note: at 80 columns the table would cut it with `…`.
    const listed = await cli(world.table, ['deliveries', 'list', '--status', 'silenced'], {
      ...env,
      COLUMNS: '300',
    });
    expect(listed.code).toBe(0);
    const [header, ...lines] = listed.out.trimEnd().split('\n');
    expect(header).toMatch(/^ {2}ID +STATUS +TRIES +WHEN +ROUTES +DETAIL$/);
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).toContain(`note: silenced by ${id}: noisy tenant feed`);
  });
});

describe('status through the CLI', () => {
  it('on an empty table', async () => {
    const table = await db.table();
    const text = await cli(table, ['status']);
    expect(text).toMatchObject({ code: 0, err: '' });
    expect(text.out).toBe(
      [
        'no poller has run against this table yet: no streams or destinations are known',
        'silences: 0 active',
        'quota: no reading yet',
        '',
      ].join('\n'),
    );
    const json = await cli(table, ['status', '--json']);
    expect(JSON.parse(json.out)).toEqual({ streams: [], destinations: [], silences: 0, quota: null });
  });

  it('on a busy table: a table, or JSON', async () => {
    const world = await seedBusyTable(db);
    const text = await cli(world.table, ['status']);
    expect(text).toMatchObject({ code: 0, err: '' });
    const lines = text.out.split('\n');
    expect(lines[0]).toBe('streams:');
    expect(lines[1]).toMatch(/^ {2}STREAM +LAST POLLED +LAG +LAST RESULT$/);
    expect(lines.find((l) => l.includes('tenant'))).toMatch(/tenant +\d+ s ago +43 s +done/);
    // Every line fits 80 columns.
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    expect(lines.find((l) => l.includes('group:13'))).toMatch(/group:13 +never +- +-/);
    expect(lines.find((l) => l.trim().startsWith('soc'))).toMatch(/soc +\d+\+ +0 +no/);
    expect(lines.find((l) => l.trim().startsWith('siem'))).toMatch(/siem +0 +3 +no/);
    expect(lines.find((l) => l.trim().startsWith('pager'))).toMatch(/pager +0 +0 +yes/);
    expect(text.out).toContain('silences: 3 active');
    expect(text.out).toContain(
      `quota: ${BUSY_QUOTA.remaining} global searches left (read at ${BUSY_QUOTA.at})`,
    );

    const json = await cli(world.table, ['status', '--json']);
    const status = JSON.parse(json.out) as Status;
    expect(status.destinations[0]).toMatchObject({ destination: 'soc', pendingMore: true });
    expect(status.streams).toHaveLength(4);
    expect(status.quota).toEqual(BUSY_QUOTA);
  }, 60_000);
});
