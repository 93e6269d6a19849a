/**
 * From the demo to one's own config, as processes in a folder of their own (issue 47, items 1 and
 * 9): `npm start` on the demo, then on a config of two local receivers (Slack- and e-mail-shaped),
 * then on the demo again. Each config keeps its own state under `.data/`: the real run inherits none
 * of the demo's cursors or silences, and the demo finds its own again. A `.data/` from before that
 * rule is adopted by a real config whose deliveries it holds (nothing re-sent), and stays the demo's
 * otherwise. A second Ctrl-C stops at once and leaves no lock behind. Slow by nature (seven starts,
 * about 18 s on a quiet machine): each start's first cycles are what is tested.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { configTableName, DEMO_TABLE, FRESH_DEMO_TABLE } from '../../lib/cli/local-tables.ts';
import { type CliProcess, runCliProcess, spawnCliProcess } from '../helpers/cli-process.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end && !check()) await new Promise((r) => setTimeout(r, 50));
  return check();
}

/** The starts still running: a test that failed halfway leaves none holding its folder. */
const running = new Set<CliProcess>();
afterEach(async () => {
  for (const s of running) s.child.kill('SIGKILL');
  await Promise.all([...running].map((s) => s.exited));
});

/** `npm start` (the installed command's `start`) in `cwd`, as a process. */
function start(cwd: string, env: Record<string, string> = {}): CliProcess {
  // debug: a cycle with nothing new says so too, and that is what some tests wait for.
  const started = spawnCliProcess(['start'], { cwd, env: { PORT: '0', LOG_LEVEL: 'debug', ...env } });
  running.add(started);
  void started.exited.then(() => running.delete(started));
  return started;
}

/** Both kinds' first cycles are done (their summaries are logged, or nothing new was). */
const cycled = (s: CliProcess) => () =>
  /poll events cycle/.test(s.out()) && /poll credentials cycle/.test(s.out());

async function stop(s: CliProcess): Promise<number | null> {
  s.child.kill('SIGINT');
  return s.exited;
}

/** The events its first events cycle found new (summed over its streams' lines). */
const eventsNew = (s: CliProcess) => {
  const cycle = /poll events cycle:([^"]*)"/.exec(s.out())?.[1] ?? '';
  return [...cycle.matchAll(/(\d+) new/g)].reduce((n, m) => n + Number(m[1]), 0);
};

let slack: Receiver;
let mail: Receiver;
const CONFIG = 'configs/soc.json';
const realEnv = { ALERTS_CONFIG: CONFIG, SECRETS_FILE: 'secrets.json' };

/** A folder with a config of two receivers, `configs/soc.json`, and its secrets (Slack's URL). */
async function folder(slackUrl = slack.url): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ea-configs-'));
  await mkdir(join(dir, 'configs'));
  await writeFile(
    join(dir, CONFIG),
    JSON.stringify({
      sources: {
        tenantEvents: { enabled: true, lookback: 'PT24H' },
        credentials: { domains: ['acme.test', 'example.com'], lookback: 'P7D' },
      },
      destinations: {
        soc: { type: 'slack', url: { secret: 'socSlack' } },
        mail: {
          type: 'email',
          provider: 'generic',
          url: mail.url,
          from: 'alerts@example.com',
          to: ['soc@example.com'],
        },
      },
      routes: [{ name: 'everything', match: {}, to: ['soc', 'mail'] }],
    }),
  );
  await writeFile(join(dir, 'secrets.json'), JSON.stringify({ socSlack: slackUrl }));
  return dir;
}

beforeAll(async () => {
  slack = await startReceiver();
  mail = await startReceiver();
});
afterAll(async () => {
  await slack.close();
  await mail.close();
});

describe('each config its own state under .data/', () => {
  let dir: string;
  let demoEvents = 0;

  beforeAll(async () => {
    dir = await folder();
  });

  it('the demo first: its alerts, and a silence made beside it', async () => {
    const demo = start(dir);
    const began = Date.now();
    expect(await until(() => /\[DIGEST\] (\d+) events/.test(demo.out()), 20_000), demo.err()).toBe(true);
    console.info(`demo: first alert ${Date.now() - began} ms after the start`);
    demoEvents = Number(/\[DIGEST\] (\d+) events/.exec(demo.out())?.[1]);
    const silence = await runCliProcess(
      ['silences', 'add', 'types=paste', '--until', 'PT4H', '--reason', 'demo noise', '--by', 'alice'],
      { cwd: dir },
    );
    expect(silence.code, silence.err).toBe(0);
    expect(await until(cycled(demo), 20_000)).toBe(true);
    expect(await stop(demo)).toBe(0);
    expect(demo.out()).toContain(
      `Alert config:         built-in demo config  (its state: table ${DEMO_TABLE})`,
    );
  }, 40_000);

  it('the real config: a table of its own, every event its first cycle finds, no demo silence', async () => {
    const real = start(dir, realEnv);
    const began = Date.now();
    expect(await until(() => slack.requests.length > 0 && mail.requests.length > 0, 20_000), real.err()).toBe(
      true,
    );
    console.info(`real config: first alert ${Date.now() - began} ms after the start`);
    // The demo's table had only the demo's terminal in it: not adopted.
    expect(real.out()).not.toContain('keeps the table');
    expect(await until(cycled(real), 20_000)).toBe(true);
    // Not the demo's cursors (which would give the few events since): all the demo had, or more.
    expect(eventsNew(real)).toBeGreaterThanOrEqual(demoEvents);
    const status = await runCliProcess(['status'], { cwd: dir });
    expect(status.code, status.err).toBe(0);
    expect(status.out).toContain('silences: 0 active');
    // Beside it, with no SECRETS_FILE set, a command reads the running start's secrets.
    const before = slack.requests.length;
    const test = await runCliProcess(['destinations', 'test', 'soc'], {
      cwd: dir,
      env: { ALERTS_CONFIG: CONFIG },
    });
    expect(test.code, test.err).toBe(0);
    expect(slack.requests.length).toBe(before + 1);
    expect(await stop(real)).toBe(0);
    expect(real.out()).toContain(
      `Alert config:         ${CONFIG}  (its state: table ${configTableName(CONFIG)})`,
    );
  }, 40_000);

  it('the demo again finds its own state: its silence, nothing shown again', async () => {
    const demo = start(dir);
    expect(await until(cycled(demo), 20_000), demo.err()).toBe(true);
    const list = await runCliProcess(['silences', 'list'], { cwd: dir });
    expect(list.code, list.err).toBe(0);
    expect(list.out).toContain('demo noise');
    expect(await stop(demo)).toBe(0);
    expect(demo.out()).not.toMatch(/\[DIGEST\]/);
  }, 40_000);
});

describe('a .data/ from before each config had its own table', () => {
  it('a real config whose deliveries it holds adopts it, says so once, re-sends nothing; the demo gets a fresh one', async () => {
    const dir = await folder();
    // Before the rule every config shared the one table: TABLE_NAME makes that .data/ again.
    const old = start(dir, { ...realEnv, TABLE_NAME: DEMO_TABLE });
    expect(await until(cycled(old), 20_000), old.err()).toBe(true);
    expect(await stop(old)).toBe(0);
    const sent = slack.requests.length + mail.requests.length;

    const adopted = start(dir, realEnv);
    expect(await until(cycled(adopted), 20_000), adopted.err()).toBe(true);
    expect(await stop(adopted)).toBe(0);
    expect(adopted.out().match(/keeps the table/g)).toHaveLength(1);
    expect(adopted.out()).toContain(
      `${CONFIG} keeps the table ${DEMO_TABLE} of .data/ (its deliveries went to `,
    );
    expect(adopted.out()).toContain(`(its state: table ${DEMO_TABLE})`);
    expect(slack.requests.length + mail.requests.length).toBe(sent);

    // Settled for good: the next start says nothing of it, and the demo has a table of its own.
    const again = runCliProcess(['silences', 'list'], { cwd: dir, env: realEnv });
    expect((await again).err).not.toContain('keeps the table');
    const demo = start(dir);
    expect(await until(() => demo.out().includes('Ctrl-C stops it'), 20_000), demo.err()).toBe(true);
    expect(demo.out()).toContain(`(its state: table ${FRESH_DEMO_TABLE})`);
    expect(await stop(demo)).toBe(0);
  }, 60_000);
});

describe('Ctrl-C with a destination that never answers', () => {
  it('the first says a second stops at once; the second does, leaving no lock and no local.json', async () => {
    const hung = await startReceiver({ hang: true });
    try {
      const dir = await folder(hung.url);
      const run = start(dir, realEnv);
      expect(await until(() => hung.requests.length > 0, 20_000), run.err()).toBe(true);
      run.child.kill('SIGINT');
      expect(await until(() => run.err().includes('a second Ctrl-C stops at once'), 5_000)).toBe(true);
      const at = Date.now();
      run.child.kill('SIGINT');
      expect(await run.exited).toBe(130);
      expect(Date.now() - at).toBeLessThan(2_000);
      expect(existsSync(join(dir, '.data', 'lock'))).toBe(false);
      expect(existsSync(join(dir, '.data', 'local.json'))).toBe(false);
    } finally {
      await hung.close();
    }
  }, 30_000);
});
