/**
 * A second terminal beside `npm start`, through the real CLI: commands run in its folder use its
 * local deployment with no variable set, and say so on stderr; with `npm start` stopped they open
 * `.data/` themselves; elsewhere a missing region or missing credentials is one line naming what
 * to set, exit 2. Read-only commands need no upstream credentials and no destination secrets.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliProcess, spawnCliProcess } from '../helpers/cli-process.ts';

/** A newcomer's shell: none of the variables that point a command anywhere. */
const BARE = {
  DYNAMODB_ENDPOINT: undefined,
  TABLE_NAME: undefined,
  AWS_REGION: undefined,
  AWS_DEFAULT_REGION: undefined,
  AWS_PROFILE: undefined,
  AWS_ACCESS_KEY_ID: undefined,
  AWS_SECRET_ACCESS_KEY: undefined,
  EXPOSURE_API_URL: undefined,
  EXPOSURE_API_TOKEN: undefined,
  EXPOSURE_API_KEY: undefined,
  ALERTS_CONFIG: undefined,
  SECRETS_FILE: undefined,
  SECRET_ID: undefined,
  // No shared AWS config or instance metadata to fall back on.
  AWS_CONFIG_FILE: '/nonexistent/aws-config',
  AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/aws-credentials',
  AWS_EC2_METADATA_DISABLED: 'true',
};

let dir: string;
let stop: () => Promise<number | null>;

/**
 * npm start as a process too, as a newcomer runs it: its modules stay out of this test's process
 * (loading them here cost more CPU than the built command's start), and its pid is its own.
 */
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ea-local-'));
  const start = spawnCliProcess(['start'], { cwd: dir, env: { PORT: '0', LOG_LEVEL: 'warn' } });
  stop = async () => {
    if (start.child.exitCode === null && start.child.signalCode === null) start.child.kill('SIGINT');
    return start.exited;
  };
  await start
    .waitFor(() => start.out().includes('Ctrl-C stops it'), 25_000)
    .catch(async (error) => {
      await stop();
      throw error;
    });
}, 30_000);
afterAll(async () => {
  await stop?.().catch(() => 0);
});

describe('a second terminal beside npm start', () => {
  it('silences and status use the running npm start, and say so in one line', async () => {
    const add = await runCliProcess(
      ['silences', 'add', '--match', '{"types":["paste"]}', '--until', 'PT1H', '--reason', 'noise'],
      { cwd: dir, env: BARE },
    );
    expect(add.code, add.err).toBe(0);
    expect(add.err).toMatch(
      /^using the npm start running in this folder \(pid \d+\): DynamoDB at http:\/\/127\.0\.0\.1:\d+\n$/,
    );
    const id = /s-[0-9a-z-]+/.exec(add.out)?.[0];
    expect(id).toBeDefined();
    const status = await runCliProcess(['status', '--json'], { cwd: dir, env: BARE });
    expect(status.code, status.err).toBe(0);
    expect(JSON.parse(status.out).silences).toBe(1);
  });

  it('deliveries list needs no upstream token and no destination secrets', async () => {
    await writeFile(
      join(dir, 'other.config.json'),
      JSON.stringify({
        destinations: { soc: { type: 'slack', url: { secret: 'socSlackWebhook' } } },
        routes: [{ name: 'all', to: ['soc'] }],
      }),
    );
    const list = await runCliProcess(['deliveries', 'list', '--status', 'dead'], {
      cwd: dir,
      env: { ...BARE, ALERTS_CONFIG: 'other.config.json' },
    });
    expect(list.code, list.err).toBe(0);
    expect(list.out).toBe('no deliveries with status dead\n');
  });

  it('in its folder with TABLE_NAME set alone: the line names that as what to change, not the folder', async () => {
    const region = await runCliProcess(['status'], { cwd: dir, env: { ...BARE, TABLE_NAME: 'mine' } });
    expect(region.code).toBe(2);
    expect(region.err).toBe(
      'exposure-alerts: no AWS region: set AWS_REGION (or AWS_PROFILE naming a profile with a region), or unset TABLE_NAME: set without DYNAMODB_ENDPOINT, it points this command at AWS, not at the local DynamoDB of npm start in this folder\n',
    );
    const credentials = await runCliProcess(['silences', 'list'], {
      cwd: dir,
      env: { ...BARE, TABLE_NAME: 'mine', AWS_REGION: 'eu-west-1' },
    });
    expect(credentials.code).toBe(2);
    expect(credentials.err).toMatch(
      /^exposure-alerts: no AWS credentials: .*, or unset TABLE_NAME and AWS_REGION: set without DYNAMODB_ENDPOINT, they point this command at AWS/,
    );
    expect(credentials.err).not.toContain('run the command in the folder of npm start');
  });

  it('with npm start stopped, a command opens .data/ itself and says so; the silence is still there', async () => {
    expect(await stop()).toBe(0);
    const list = await runCliProcess(['silences', 'list'], { cwd: dir, env: BARE });
    expect(list.code, list.err).toBe(0);
    expect(list.err).toBe(
      'npm start is not running in this folder: this command opened its DynamoDB from .data/\n',
    );
    expect(list.out).toContain('noise');
  });

  it('anywhere else: no region, then no credentials, each one line naming what to set, exit 2', async () => {
    const elsewhere = await mkdtemp(join(tmpdir(), 'ea-elsewhere-'));
    const region = await runCliProcess(['status'], { cwd: elsewhere, env: BARE });
    expect(region.code).toBe(2);
    expect(region.err).toMatch(/^exposure-alerts: no AWS region: set AWS_REGION .*npm start.*\n$/);
    const credentials = await runCliProcess(['silences', 'list'], {
      cwd: elsewhere,
      env: { ...BARE, AWS_REGION: 'eu-west-1' },
    });
    expect(credentials.code).toBe(2);
    expect(credentials.err).toMatch(
      /^exposure-alerts: no AWS credentials: set AWS_PROFILE, or AWS_ACCESS_KEY_ID/,
    );
    expect(credentials.err.split('\n').filter(Boolean)).toHaveLength(1);
  });
});
