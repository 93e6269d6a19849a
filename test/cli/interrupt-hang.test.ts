/**
 * One Ctrl-C stops a one-shot command whatever it waits for: the CLI in a process of its own (its
 * own process group, signalled as a terminal signals it) against dependencies that accept the
 * connection and never answer (DynamoDB and the upstream, the upstream alone, a destination). It
 * exits 130 within a few seconds and names what it was waiting for; without the stop's bound it
 * waited for each request's own timeout, or for ever (DynamoDB's client has none).
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, it } from 'vitest';
import { deliveryWorld } from '../deliver/seed.ts';
import { type CliProcess, spawnCliProcess } from '../helpers/cli-process.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { standIn } from '../helpers/stand-in.ts';

const db = useDynalite();
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ea-hang-'));
});

/** A stand-in that takes every request and never answers; `requests` counts those it took. */
async function hang(): Promise<{ url: string; requests: () => number }> {
  let taken = 0;
  const stand = await standIn(() => {
    taken += 1;
  });
  return { url: stand.url, requests: () => taken };
}

/** The CLI as a terminal starts it: a process group of its own, which Ctrl-C signals whole. */
const spawnCli = (argv: string[], env: Record<string, string>) =>
  spawnCliProcess(argv, { cwd: dir, env, detached: true });

/** Ctrl-C to the run's process group, once; how long it took to exit, and its code. */
async function interrupt(run: CliProcess): Promise<{ code: number | null; ms: number }> {
  const asked = Date.now();
  process.kill(-(run.child.pid as number), 'SIGINT');
  const code = await Promise.race([
    run.exited,
    new Promise<'running'>((r) => setTimeout(() => r('running'), 8_000)),
  ]);
  if (code === 'running') {
    process.kill(-(run.child.pid as number), 'SIGKILL');
    throw new Error(`still running 8 s after one SIGINT\nstdout: ${run.out()}\nstderr: ${run.err()}`);
  }
  return { code, ms: Date.now() - asked };
}

async function configFile(destination: Record<string, unknown>): Promise<string> {
  const file = join(dir, `config-${Math.random().toString(36).slice(2)}.json`);
  await writeFile(
    file,
    JSON.stringify({
      sources: { tenantEvents: { lookback: 'P1D' } },
      destinations: { out: destination },
      routes: [{ name: 'all', to: ['out'] }],
    }),
  );
  return file;
}

const WAITING =
  /^exposure-alerts: stopped by SIGINT while waiting for (.+?), still waiting 3 s after the stop; what it recorded stands/;

// At once: each waits out the stop's 3 s bound.
describe.concurrent('one Ctrl-C, a dependency that never answers', () => {
  it('poll events --once, DynamoDB and the upstream both hung: exits 130 within seconds, naming DynamoDB', async ({
    expect,
  }) => {
    const dynamo = await hang();
    const upstream = await hang();
    const run = spawnCli(['poll', 'events', '--once'], {
      EXPOSURE_API_URL: upstream.url,
      EXPOSURE_API_TOKEN: 'hang-token',
      DYNAMODB_ENDPOINT: dynamo.url,
      TABLE_NAME: 'hung',
    });
    await run.waitFor(() => dynamo.requests() > 0, 8_000);
    const { code, ms } = await interrupt(run);
    expect(code, run.err()).toBe(130);
    expect(ms).toBeLessThan(5_000);
    const lines = run.err().trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(WAITING);
    expect(WAITING.exec(lines[0] as string)?.[1]).toBe(`DynamoDB at ${dynamo.url} (DescribeTable)`);
    expect(run.err()).not.toContain('hang-token');
  }, 10_000);

  it('poll events --once, the upstream hung (DynamoDB answers): exits 130 within seconds, naming the upstream', async ({
    expect,
  }) => {
    const upstream = await hang();
    const run = spawnCli(['poll', 'events', '--once'], {
      EXPOSURE_API_URL: upstream.url,
      EXPOSURE_API_TOKEN: 'hang-token',
      DYNAMODB_ENDPOINT: db.endpoint,
      TABLE_NAME: await db.table(),
      ALERTS_CONFIG: await configFile({ type: 'webhook', url: 'http://127.0.0.1:9/hook' }),
    });
    await run.waitFor(() => upstream.requests() > 0, 8_000);
    const { code, ms } = await interrupt(run);
    expect(code, run.err()).toBe(130);
    expect(ms).toBeLessThan(5_000);
    expect(run.out()).toContain('poll events:');
    expect(run.err()).toMatch(WAITING);
    expect(WAITING.exec(run.err())?.[1]).toBe(`the upstream at ${upstream.url}`);
  }, 10_000);

  it('deliver --once, a destination hung: exits 130 within seconds, naming the destination but not its path', async ({
    expect,
  }) => {
    const receiver = await hang();
    // A Slack-style URL: its path is the secret, and never shows.
    const destination = { type: 'webhook', url: `${receiver.url}/services/T000/B000/secret-part` };
    const world = await deliveryWorld(db, {
      sources: { tenantEvents: { lookback: 'P1D' } },
      destinations: { out: destination },
      routes: [{ name: 'all', to: ['out'] }],
    });
    await world.seed('out', 2);
    const run = spawnCli(['deliver', '--once'], {
      EXPOSURE_API_URL: 'http://127.0.0.1:9',
      EXPOSURE_API_TOKEN: 'unused-token',
      DYNAMODB_ENDPOINT: db.endpoint,
      TABLE_NAME: world.table,
      ALERTS_CONFIG: await configFile(destination),
    });
    await run.waitFor(() => receiver.requests() > 0, 8_000);
    const { code, ms } = await interrupt(run);
    expect(code, run.err()).toBe(130);
    // Its 10 s send timeout is not waited out.
    expect(ms).toBeLessThan(5_000);
    expect(WAITING.exec(run.err())?.[1]).toBe(`destination out at ${receiver.url}`);
    expect(run.err()).not.toContain('secret-part');
  }, 10_000);
});
