/**
 * `npm start` and `npm run cli` build the command only when the last build no longer stands
 * (lib/cli/build.mjs): when in doubt, they build. Checked on a folder of a few files and the record
 * of a build made from them; no build runs here.
 */
import { mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { recordBuild, upToDate } from '../../lib/cli/build.mjs';

const HOUR = 3_600_000;
const INPUTS = ['lib/cli/main.ts', 'lib/cli/run.ts', 'package.json', 'package-lock.json'];
const OUTPUTS = ['dist/exposure-alerts.mjs', 'dist/chunk-A.mjs'];

function write(at: string, file: string, text: string, ago = HOUR): void {
  mkdirSync(dirname(join(at, file)), { recursive: true });
  writeFileSync(join(at, file), text);
  const when = new Date(Date.now() - ago);
  utimesSync(join(at, file), when, when);
}

/** A checkout whose command was built a minute ago from files last changed an hour ago (no lock file). */
async function built(): Promise<string> {
  const at = await mkdtemp(join(tmpdir(), 'ea-build-'));
  for (const file of INPUTS.filter((f) => f !== 'package-lock.json')) write(at, file, `// ${file}\n`);
  for (const file of OUTPUTS) write(at, file, `// built\n`, 60_000);
  recordBuild(INPUTS, OUTPUTS, Date.now() - 60_000, at);
  return at;
}

describe('the build before a command', () => {
  it('is skipped while every file is as the last build found it', async () => {
    expect(upToDate(await built())).toBe(true);
  });

  it.each([
    ['a source changed', (at: string) => write(at, 'lib/cli/run.ts', '// edited\n', 0)],
    // A checkout or an archive can set a time older than the build's: not newer, but not the same.
    [
      'a source given an older time, as a checkout may',
      (at: string) => write(at, 'lib/cli/run.ts', '// lib/cli/run.ts\n', 2 * HOUR),
    ],
    ['a source deleted', (at: string) => rmSync(join(at, 'lib/cli/run.ts'))],
    [
      'a file that was not there appearing (package-lock.json)',
      (at: string) => write(at, 'package-lock.json', '{}'),
    ],
    ['a file the build wrote deleted', (at: string) => rmSync(join(at, 'dist/chunk-A.mjs'))],
    [
      'a file the build wrote changed',
      (at: string) => write(at, 'dist/exposure-alerts.mjs', '// other\n', 0),
    ],
    ['no record of the last build', (at: string) => rmSync(join(at, 'dist/exposure-alerts.build.json'))],
    [
      'a record it cannot read',
      (at: string) => writeFileSync(join(at, 'dist/exposure-alerts.build.json'), '{'),
    ],
  ])('runs again after %s', async (_, change) => {
    const at = await built();
    change(at);
    expect(upToDate(at)).toBe(false);
  });

  it('runs again after a build that read a file changed while it ran, though nothing changed since', async () => {
    const at = await built();
    write(at, 'lib/cli/run.ts', '// edited during the build\n', 0);
    recordBuild(INPUTS, OUTPUTS, Date.now() - 500, at);
    expect(upToDate(at)).toBe(false);
  });

  it("keeps the files of the build before (a running command may still load them), not older ones'", async () => {
    const at = await built();
    expect(recordBuild(INPUTS, ['dist/exposure-alerts.mjs', 'dist/chunk-B.mjs'], Date.now(), at)).toEqual([]);
    expect(recordBuild(INPUTS, ['dist/exposure-alerts.mjs', 'dist/chunk-C.mjs'], Date.now(), at)).toEqual([
      'dist/chunk-A.mjs',
    ]);
  });
});
