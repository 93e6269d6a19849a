/**
 * What a dry run shows (interface.md section 1): each message headed by the destination it stands
 * for, saying it would send it (never that it was sent), and naming the `preview` that shows it as
 * that destination would receive it; that command does, for that destination only. And a dry run's
 * table is `<TABLE_NAME>-dry-run` when TABLE_NAME is set. Real emulator, real dynalite, the real CLI.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lib/cli/run.ts';
import { readEnvironment } from '../../lib/env.ts';
import { memoryLogger } from '../../lib/log.ts';
import { runPollCycle } from '../../lib/poll/cycle.ts';
import { createRuntime } from '../../lib/runtime.ts';
import { dryRunTable } from '../../lib/state/read-through.ts';
import { ensureTable } from '../../lib/state/table.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { captureIo } from '../helpers/io.ts';
import { configFrom } from '../helpers/world.ts';

const emu = useEmulator();
const db = useDynalite();
const home = process.cwd();
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ea-dry-shows-'));
  process.chdir(dir);
});
afterAll(() => process.chdir(home));

const config = {
  sources: { tenantEvents: { lookback: 'PT6H' } },
  destinations: {
    siem: { type: 'webhook', url: { secret: 'siemUrl' } },
    soc: { type: 'slack', url: { secret: 'socWebhook' } },
  },
  routes: [{ name: 'all', to: ['siem', 'soc'] }],
};

describe('a dry run shows each destination its own messages', () => {
  it('heads each message with the preview command, which shows it as that destination receives it', async () => {
    const file = join(dir, 'alerts.config.json');
    await writeFile(file, JSON.stringify(config));
    const table = dryRunTable(`shows-${Date.now()}`);
    await ensureTable(db.client, table);
    const lines: string[] = [];
    const dry = await createRuntime({
      env: readEnvironment({
        EXPOSURE_API_URL: emu.url,
        EXPOSURE_API_TOKEN: 'emu-acme-token',
        TABLE_NAME: table,
        DYNAMODB_ENDPOINT: db.endpoint,
      }),
      config: configFrom(config),
      secrets: {},
      logger: memoryLogger('info'),
      dynamo: db.client,
      upstream: emu.client(),
      write: (text) => lines.push(text),
      dryRun: true,
      dryRunFiles: join(dir, '.data', 'dry-run'),
    });
    await runPollCycle(dry.cycle, 'events', { deadline: Date.now() + 30_000 });
    const text = lines.join('');
    expect(text).not.toMatch(/not sent|\bsent\b/);
    const heading =
      /── siem \(webhook, dry run: would send this; as siem would receive it: exposure-alerts preview (\S+) --destination siem\) ──/.exec(
        text,
      );
    expect(heading).not.toBeNull();
    const items = heading?.[1] as string;
    // The path as it is typed in this folder.
    expect(items).toBe(join('.data', 'dry-run', 'siem-1.json'));
    expect(existsSync(items)).toBe(true);
    const uids = (JSON.parse(readFileSync(items, 'utf8')) as { metadata: { uid: string } }[]).map(
      (i) => i.metadata.uid,
    );
    expect(uids.length).toBeGreaterThan(0);

    const io = captureIo({ ALERTS_CONFIG: file });
    expect(await runCli(['preview', items, '--destination', 'siem'], io)).toBe(0);
    expect(io.out).toContain('=== siem (webhook)');
    expect(io.out).not.toContain('=== soc');
    // The webhook's own payload, every item of the message in it.
    const body = io.out.slice(io.out.indexOf('=== siem'));
    for (const uid of uids) expect(body).toContain(`"uid": "${uid}"`);

    const wrong = captureIo({ ALERTS_CONFIG: file });
    expect(await runCli(['preview', items, '--destination', 'nowhere'], wrong)).toBe(2);
    expect(wrong.err).toContain('the config has no destination "nowhere"');
  });

  it('with TABLE_NAME set, start --dry-run keeps its records in <TABLE_NAME>-dry-run', async () => {
    const io = captureIo({ PORT: '0', LOG_LEVEL: 'warn', TABLE_NAME: 'mine' });
    const controller = new AbortController();
    const done = runCli(['start', '--dry-run'], io, controller.signal);
    const end = Date.now() + 8_000;
    while (Date.now() < end && !io.out.includes('Ctrl-C stops it'))
      await new Promise((r) => setTimeout(r, 50));
    const local = JSON.parse(readFileSync(join('.data', 'local.json'), 'utf8')) as { tableName: string };
    controller.abort();
    expect(await done).toBe(0);
    expect(io.out).toContain('(records in table mine-dry-run');
    expect(local.tableName).toBe('mine-dry-run');
  }, 15_000);
});
