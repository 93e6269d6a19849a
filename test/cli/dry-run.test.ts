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
import { type CliProcess, runCliProcess, spawnCliProcess } from '../helpers/cli-process.ts';

/**
 * npm start runs as a process, as a newcomer runs it: the product's modules stay out of this test's
 * process (loading them here cost more CPU than the built command's start).
 */
let dir: string;
let running: CliProcess | undefined;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ea-dry-'));
  await copyFile(join(PROJECT_ROOT, 'infra/alerts.config.example.json'), join(dir, 'alerts.config.json'));
});
afterAll(async () => {
  if (running && running.child.exitCode === null && running.child.signalCode === null) {
    running.child.kill('SIGKILL');
    await running.exited;
  }
});

describe('npm start with the example config', () => {
  it('without its secrets: exit 2, each missing secret named, and both ways forward said', async () => {
    const run = await runCliProcess(['start'], { cwd: dir, env: { PORT: '0' } });
    expect(run.code).toBe(2);
    expect(run.err).toContain('exposure-alerts: 12 destination secrets are missing:');
    expect(run.err).toContain('destinations.soc.url: secret "socSlackWebhook"');
    expect(run.err).toContain('set SECRETS_FILE=<that file>');
    expect(run.err).toContain('run npm start -- --dry-run');
  });

  it('--dry-run: each destination printed here under its name and kind, nothing sent, records apart, no warning', async () => {
    const run = spawnCliProcess(['start', '--dry-run'], { cwd: dir, env: { PORT: '0', LOG_LEVEL: 'warn' } });
    running = run;
    await run.waitFor(() => run.out().includes('Ctrl-C stops it'), 15_000);
    // Its own table, named after the real run's (whatever that is for this config).
    expect(run.out()).toMatch(
      /Dry run: {14}nothing is sent: each destination's messages are printed here instead, each with the preview command that shows it as that destination would receive it \(records in table \S+-dry-run, reading the real run's where it has none\)/,
    );
    await run.waitFor(() => /── \w+ \(\w+, dry run: would send this; /.test(run.out()), 20_000);
    run.child.kill('SIGINT');
    expect(await run.exited, run.err()).toBe(0);
    const out = run.out();
    // The first cycle polled every stream (its pass comes after): nothing worth a warning.
    expect(out).not.toMatch(/"level":"(warn|error)"/);
    // The top-level tenant (Globex, the MSSP key's own) is not a tenants entry: no [Globex] alerts.
    expect(out).not.toContain('[Globex]');
    expect(out).toContain('[Initech]');
    const shown = new Set(
      [...out.matchAll(/── (\w+) \((\w+), dry run: would send this; /g)].map((m) => `${m[1]}:${m[2]}`),
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
