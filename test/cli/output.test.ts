/**
 * What the CLI prints, as a shell sees it, through the real CLI in a process of its own:
 * - a stdout nobody reads any more (`| head -1`) ends the command quietly, exit 0, no stack trace;
 * - tables fit the terminal: COLUMNS, else the terminal's width, else 80; the widest columns give
 *   way, cut with `…`, one line per row, never a value folded onto a second line.
 */
import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { deliveriesTable } from '../../lib/cli/commands/poll.ts';
import { runCli } from '../../lib/cli/run.ts';
import { formatTable, tableWidth } from '../../lib/cli/terminal.ts';
import { systemClock } from '../../lib/clock.ts';
import { DeliveryRecords, deliveryId } from '../../lib/state/records/index.ts';
import { BIN, cleanEnv, runCliProcess } from '../helpers/cli-process.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { captureIo } from '../helpers/io.ts';

const db = useDynalite();
let dir: string;
let table: string;

const REASON =
  'paste noise during the migration of the ticketing system to the new cluster, agreed with the SOC lead on the bridge call';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ea-output-'));
  table = await db.table();
  const add = captureIo({ TABLE_NAME: table, DYNAMODB_ENDPOINT: db.endpoint });
  expect(
    await runCli(
      ['silences', 'add', 'types=paste', '--until', 'PT4H', '--reason', REASON, '--by', 'alice'],
      add,
    ),
  ).toBe(0);
  const key = 'paste/pb/abc1';
  await new DeliveryRecords(db.client, table, systemClock).queue.save([
    {
      id: deliveryId('terminal', 'event', key),
      destination: 'terminal',
      kind: 'event',
      key,
      source: 'tenant',
      status: 'dead',
      attempts: 3,
      lastError: `HTTP 400 ${'the destination refused the message because its body broke a rule; '.repeat(3)}`,
      routes: ['everything'],
      item: { metadata: { uid: key } },
      createdAt: '2026-11-20T10:00:00.000Z',
      updatedAt: '2026-11-20T10:00:00.000Z',
    },
  ]);
});

const tableEnv = () => ({ TABLE_NAME: table, DYNAMODB_ENDPOINT: db.endpoint, COLUMNS: undefined });

/** The CLI with a stdout that is closed before it prints (`| true`), or after its first chunk (`| head -1`). */
function closedPipe(argv: string[], env: Record<string, string>, when: 'at once' | 'after a chunk') {
  const child = spawn(process.execPath, [BIN, ...argv], {
    cwd: dir,
    env: { ...cleanEnv({ LOG_LEVEL: '' }), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (when === 'at once') child.stdout.destroy();
  else child.stdout.once('data', () => child.stdout.destroy());
  let err = '';
  child.stderr.on('data', (d) => {
    err += d;
  });
  return new Promise<{ code: number | null; err: string }>((done) =>
    child.on('close', (code) => done({ code, err })),
  );
}

describe('a closed stdout', () => {
  it.each([['at once'], ['after a chunk']] as const)(
    'config schema | head (closed %s): no stack trace, no error line, exit 0',
    async (when) => {
      expect(await closedPipe(['config', 'schema'], {}, when)).toEqual({ code: 0, err: '' });
    },
  );

  it('deliveries list | head: the same', async () => {
    const env = { TABLE_NAME: table, DYNAMODB_ENDPOINT: db.endpoint };
    expect(await closedPipe(['deliveries', 'list'], env, 'at once')).toEqual({ code: 0, err: '' });
  });
});

describe('tables fit the terminal', () => {
  it('silences list at COLUMNS=200: the reason whole, on its row', async () => {
    const p = await runCliProcess(['silences', 'list'], { cwd: dir, env: { ...tableEnv(), COLUMNS: '200' } });
    expect(p.code, p.err).toBe(0);
    const lines = p.out.trimEnd().split('\n');
    expect(lines).toHaveLength(2); // the header and the one silence: nothing folded
    expect(lines[0]).toMatch(/^ {2}ID +ENDS +BY +MATCH +REASON$/);
    expect(lines[1]).toMatch(new RegExp(`^  s-\\S+ +in 4 h +cli:alice +types=paste +${REASON}$`));
  });

  it('piped, without COLUMNS: 80 columns, the reason cut with …, the id whole, one line per row', async () => {
    const p = await runCliProcess(['silences', 'list'], { cwd: dir, env: tableEnv() });
    expect(p.code, p.err).toBe(0);
    const lines = p.out.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(80);
    expect(lines[1]).toMatch(/^ {2}s-[0-9a-z]{9}-[0-9a-f]{6} /);
    expect(lines[1]).toMatch(/paste noise during the\S* .*…$/);
  });

  it('deliveries list: a table of the same kind', async () => {
    const list = await runCliProcess(['deliveries', 'list'], { cwd: dir, env: tableEnv() });
    expect(list.code, list.err).toBe(0);
    const rows = list.out.trimEnd().split('\n');
    // In 80 columns, ROUTES and TRIES give way to DETAIL (formatTable's `room`).
    expect(rows[0]).toMatch(/^ {2}ID +STATUS +WHEN +DETAIL$/);
    expect(rows).toHaveLength(2);
    for (const line of rows) expect([...line].length).toBeLessThanOrEqual(80);
    expect(rows[1]).toMatch(
      /^ {2}terminal~event~paste\/pb\/abc1 +dead +\d+ \w+ ago +last error: HTTP 400 .*…$/,
    );
  });
});

describe('formatTable', () => {
  it('the widest columns give way first, together, down to the next widest', () => {
    const rows = [
      ['ID', 'A', 'B'],
      ['x', 'a'.repeat(40), 'b'.repeat(30)],
    ];
    // 2 + 2 + 40 + 30 + 4 = 78 wide; at 60, 18 columns go: A to 30 first, then both by 4.
    expect(formatTable(rows, { width: 60 })[1]).toBe(`  x   ${'a'.repeat(25)}…  ${'b'.repeat(25)}…`);
    expect(formatTable(rows, { width: 100 })[1]).toBe(`  x   ${'a'.repeat(40)}  ${'b'.repeat(30)}`);
  });

  it('kept columns are never cut; no column goes below 8 characters or its header', () => {
    const rows = [
      ['IDENTIFIER', 'REASONS'],
      ['i'.repeat(50), 'r'.repeat(50)],
    ];
    const [head, row] = formatTable(rows, { width: 40, keep: [0] });
    expect(row).toBe(`  ${'i'.repeat(50)}  ${'r'.repeat(7)}…`);
    expect(head).toBe(`  ${'IDENTIFIER'.padEnd(50)}  REASONS`);
  });

  it('deliveries in 80 columns: DETAIL keeps its room, ROUTES then TRIES give way (issue 47, item 9)', () => {
    const now = Date.parse('2026-12-07T12:00:00Z');
    const record = {
      id: 'terminal~event~paste/pb/abc1',
      destination: 'terminal',
      kind: 'event' as const,
      key: 'paste/pb/abc1',
      source: 'events',
      status: 'silenced' as const,
      attempts: 0,
      routes: ['everything', 'critical'],
      item: {},
      createdAt: '2026-12-07T11:00:00Z',
      updatedAt: '2026-12-07T11:00:00Z',
      note: 'silenced by s-mirlq3-8f3a2c: paste noise while the SOC migrates',
    };
    const [head, row] = deliveriesTable([record], now, 80);
    expect(head).toMatch(/^ {2}ID +STATUS +WHEN +DETAIL$/);
    // Was `note: s…` with every column kept.
    expect(row).toMatch(/ {2}note: silenced by s-mirl.*…$/);
    expect(row?.length).toBeLessThanOrEqual(80);
    // Wide enough, nothing is left out.
    expect(deliveriesTable([record], now, 160)[0]).toContain('ROUTES');
  });

  it('the width: COLUMNS, else the terminal, else 80', () => {
    expect(tableWidth({ env: { COLUMNS: '132' }, columns: 100 })).toBe(132);
    expect(tableWidth({ env: { COLUMNS: 'wide' }, columns: 100 })).toBe(100);
    expect(tableWidth({ env: {} })).toBe(80);
  });
});
