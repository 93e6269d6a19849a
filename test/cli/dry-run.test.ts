/**
 * Trying one's own config locally: the deploy guide's example config in a fresh folder. Without
 * its secrets `npm start` says how to run it either way; with `--dry-run` every destination's
 * alerts are printed in the terminal, named, and nothing is sent, and the run is clean: no
 * warning, no error (its identifier group exists in the emulator, and no tenant is polled twice).
 */
import { copyFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/alerts-config.ts';
import { runCli } from '../../lib/cli/run.ts';
import { captureIo } from '../helpers/io.ts';

const home = process.cwd();
beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ea-dry-'));
  await copyFile(join(PROJECT_ROOT, 'infra/alerts.config.example.json'), join(dir, 'alerts.config.json'));
  process.chdir(dir);
});
afterAll(() => process.chdir(home));

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end && !check()) await new Promise((r) => setTimeout(r, 50));
  return check();
}

describe('npm start with the example config', () => {
  it('without its secrets: exit 2, each missing secret named, and both ways forward said', async () => {
    const io = captureIo({ PORT: '0' });
    expect(await runCli(['start'], io)).toBe(2);
    expect(io.err).toContain('exposure-alerts: 12 destination secrets are missing:');
    expect(io.err).toContain('destinations.soc.url: secret "socSlackWebhook"');
    expect(io.err).toContain('set SECRETS_FILE=<that file>');
    expect(io.err).toContain('run npm start -- --dry-run');
  });

  it('--dry-run: each destination printed here under its name and kind, nothing sent, records apart, no warning', async () => {
    const io = captureIo({ PORT: '0', LOG_LEVEL: 'warn' });
    const controller = new AbortController();
    const done = runCli(['start', '--dry-run'], io, controller.signal);
    expect(await until(() => io.out.includes('Ctrl-C stops it'), 15_000)).toBe(true);
    // Its own table, named after the real run's (whatever that is for this config).
    expect(io.out).toMatch(
      /Dry run: {14}nothing is sent: each destination's messages are printed here instead, each with the preview command that shows it as that destination would receive it \(records in table \S+-dry-run, reading the real run's where it has none\)/,
    );
    expect(await until(() => /── \w+ \(\w+, dry run: would send this; /.test(io.out), 20_000)).toBe(true);
    controller.abort();
    expect(await done).toBe(0);
    // The first cycle polled every stream (its pass comes after): nothing worth a warning.
    expect(io.out).not.toMatch(/"level":"(warn|error)"/);
    // The top-level tenant (Globex, the MSSP key's own) is not a tenants entry: no [Globex] alerts.
    expect(io.out).not.toContain('[Globex]');
    expect(io.out).toContain('[Initech]');
    const shown = new Set(
      [...io.out.matchAll(/── (\w+) \((\w+), dry run: would send this; /g)].map((m) => `${m[1]}:${m[2]}`),
    );
    // Every shown destination is the config's, under its own kind.
    for (const name of shown)
      expect([
        'soc:slack',
        'socApp:slack',
        'siem:webhook',
        'socTeams:teams',
        'oncall:pagerduty',
        'tickets:jira',
        'itsm:servicenow',
        'socDiscord:discord',
        'socChat:googlechat',
        'socMattermost:mattermost',
        'hec:splunk',
        'sentinel:sentinel',
      ]).toContain(name);
    expect(shown.size).toBeGreaterThanOrEqual(2);
  }, 40_000);
});
