/**
 * Every command that would act outside, in a folder a dry run holds (`.data/local.json` of a live
 * `npm start -- --dry-run`: here this process stands in for it), exits 2 saying so, whatever the
 * variables say, and opens nothing; `poll` and `deliver` pointed at another table by a variable
 * exit 2 too, since a dry run's records belong in its own. The real dry run beside real commands:
 * dry-run-acts.test.ts.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalDeployment } from '../../lib/cli/local.ts';
import { runCli } from '../../lib/cli/run.ts';
import { captureIo } from '../helpers/io.ts';

const home = process.cwd();
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ea-dry-beside-'));
  await mkdir(join(dir, '.data'));
  // Nothing listens there: a command that got past the refusal would fail another way.
  const held: LocalDeployment = {
    pid: process.pid,
    dynamodb: 'http://127.0.0.1:9',
    tableName: 'exposure-alerts-dry-run',
    upstream: { url: 'http://127.0.0.1:9', token: 'unused' },
    dryRun: true,
  };
  await writeFile(join(dir, '.data', 'local.json'), JSON.stringify(held));
  process.chdir(dir);
});
afterAll(() => process.chdir(home));

const ACTING = [
  ['events', 'ignore', 'leak/acme/1'],
  ['events', 'unremediate', 'leak/acme/1'],
  ['identity', 'revoke-sessions', 'kim@acme.test'],
  ['identity', 'disable', 'kim@acme.test'],
  ['assets', 'toggle', '1', '--disable'],
  ['destinations', 'test'],
  ['deliveries', 'retry', '--all-dead'],
];

describe('beside a dry run', () => {
  it.each(ACTING)('%s %s exits 2 saying so, and opens nothing', async (...argv) => {
    // Pointed elsewhere by a variable, it is refused all the same: the dry run holds the folder.
    const io = captureIo({ EXPOSURE_API_URL: 'http://127.0.0.1:9', EXPOSURE_API_TOKEN: 't' });
    expect(await runCli(argv, io)).toBe(2);
    const name = argv.filter((a) => !/[/@.\d]/.test(a) && !a.startsWith('-')).join(' ');
    expect(io.err).toBe(
      `exposure-alerts: a dry run (npm start -- --dry-run, pid ${process.pid}) holds .data/ here: ${name} would act outside, so nothing was done; stop the dry run (or run ${name} from another folder) to act\n`,
    );
    expect(existsSync(join(dir, '.data', 'lock'))).toBe(false);
  });

  it('poll and deliver on another table than the dry run’s: exit 2, naming the variable', async () => {
    for (const argv of [
      ['poll', 'events', '--once'],
      ['deliver', '--once'],
    ]) {
      const io = captureIo({ TABLE_NAME: 'exposure-alerts' });
      expect(await runCli(argv, io)).toBe(2);
      expect(io.err).toContain(
        'runs here only as a dry run on its table, but TABLE_NAME points it at another',
      );
    }
  });
});
