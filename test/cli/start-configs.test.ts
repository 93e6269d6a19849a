/**
 * From the demo to one's own config, as processes in folders of their own (issue 47, items 1, 2
 * and 9): `start` on the demo, then a config of two local receivers (Slack- and e-mail-shaped) with
 * `--dry-run`, then for real, then the demo again. The real run sends each destination exactly the
 * items the dry run said it would (as many, the same keys), as many as the demo had (not the few
 * since the demo's cursors), held by no silence of the demo's (one of everything); the demo then
 * finds its own state again (its silence, nothing new). A `.data/` from before each config had its
 * own table is adopted by a real config whose deliveries it holds (nothing re-sent), and a second
 * Ctrl-C stops at once, leaving no lock.
 *
 * Cheap on purpose (the suite is CPU-bound; a file has 10 s): each start is the installed command
 * itself (no npm, no build), stopped as soon as what it must show has shown; every start polls one
 * small emulator in this process (8 events, 60 credentials, no limits, no live events, so the dry
 * run and the real run see the same items); the real config's `upstream` rates are those `start`
 * gives its own emulator, so its cycles are not paced at the real tiers; the other two folders'
 * tests run beside the journey, one after the other (at most two starts at once, one a core).
 * Message counts are not compared: how a pass groups items into messages depends on whether both
 * kinds' cycles ended before it began, in a real run as in a dry one.
 *
 * Longer than 300 lines because the journey reads best as one test, with the few readers of a
 * run's output it compares (its passes, the dry run's files, what each receiver got) beside it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, type ExpectStatic, it } from 'vitest';
import {
  configTableName,
  DEMO_TABLE,
  FRESH_DEMO_TABLE,
  localTableFor,
  settleOldTable,
} from '../../lib/cli/local-tables.ts';
import { TEST_MARK } from '../../lib/render/notice.ts';
import { type CliProcess, runCliProcess, spawnCliProcess } from '../helpers/cli-process.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';

const emu = useEmulator({ seed: 42, eventsPerTenant: 8, lateMatchesPerTenant: 0, credentials: 60 });

/** The starts still running: a test that failed halfway leaves none holding its folder. */
const running = new Set<CliProcess>();
afterAll(async () => {
  for (const s of running) s.child.kill('SIGKILL');
  await Promise.all([...running].map((s) => s.exited));
});

/** `npm start` (the installed command's `start`) in `cwd`, on this file's emulator. */
function start(cwd: string, env: Record<string, string> = {}, args: string[] = []): CliProcess {
  const started = spawnCliProcess(['start', ...args], {
    cwd,
    env: {
      PORT: '0',
      // debug: a cycle with nothing new says so too, and that is what the demo's return waits for.
      LOG_LEVEL: 'debug',
      EXPOSURE_API_URL: emu.url,
      EXPOSURE_API_TOKEN: emu.running.emulator.dataset.tenant('acme').token,
      ...env,
    },
  });
  running.add(started);
  void started.exited.then(() => running.delete(started));
  return started;
}

async function stop(s: CliProcess): Promise<number | null> {
  s.child.kill('SIGINT');
  return s.exited;
}

/** Both kinds' first cycles are over, their delivery passes with them (or nothing was new). */
const cycled = (s: CliProcess) => () =>
  /poll events cycle/.test(s.out()) && /poll credentials cycle/.test(s.out());

/** The messages a run logged (one JSON line each: its output is not a terminal). */
const logged = (s: CliProcess): string[] =>
  s
    .out()
    .split('\n')
    .flatMap((line) => {
      try {
        return line.startsWith('{') ? [String((JSON.parse(line) as { message: unknown }).message)] : [];
      } catch {
        return [];
      }
    });

/**
 * Waits for both kinds' first cycles of a run on a table of its own, and checks that each walked
 * every stream to its end: a machine too busy for a cycle's time budget fails here, saying so (a
 * stream stopped by the budget before its first page is logged as "nothing new").
 */
async function firstCycles(s: CliProcess, expect: ExpectStatic): Promise<void> {
  await s.waitFor(cycled(s), 60_000);
  const blocks = logged(s).filter((m) => /^poll \w+ cycle:\n/.test(m));
  expect(blocks.map((b) => b.slice(0, b.indexOf(':'))).sort(), s.out()).toEqual([
    'poll credentials cycle',
    'poll events cycle',
  ]);
  for (const line of blocks.flatMap((b) => b.split('\n').slice(1)))
    expect(line, s.out()).toMatch(/^ {2}\S+: done,/);
}

/** Items each destination was sent (or, in a dry run, would have been), summed over the run's passes. */
function passCounts(s: CliProcess): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const block of logged(s).filter((m) => m.startsWith('delivery pass:')))
    for (const [, name, would, sent] of block.matchAll(
      /^ {2}(\S+): [^,]+, (?:would send (\d+)|(\d+) sent)/gm,
    ))
      counts[name as string] = (counts[name as string] ?? 0) + Number(would ?? sent);
  return counts;
}

/** An alert as the demo's terminal shows it (its first line). */
const ALERT = /^\[(CRITICAL|HIGH|MEDIUM|LOW|INFO|DIGEST)\]/m;

/** An item's key as its messages show it: an event's uid, a credential's login. */
const keyOf = (item: { metadata?: { uid: string }; identity_name?: string }) =>
  item.metadata?.uid ?? item.identity_name ?? '';

/** The keys of each destination's messages in a dry run, from the items it leaves for `preview`. */
function dryRunKeys(dir: string): Record<string, string[]> {
  const files = join(dir, '.data', 'dry-run');
  const keys: Record<string, string[]> = {};
  for (const file of readdirSync(files)) {
    const name = file.replace(/-\d+\.json$/, '');
    const items = JSON.parse(readFileSync(join(files, file), 'utf8')) as Parameters<typeof keyOf>[0][];
    keys[name] = [...(keys[name] ?? []), ...items.map(keyOf)];
  }
  return keys;
}

/** `key` named in `body` as a whole (not `kim.doe1@…` inside `kim.doe12@…`). */
const mentions = (body: string, key: string) =>
  new RegExp(`(?<![\\w.-])${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w-])`).test(body);

/** How many of `receiver`'s requests name each of `keys`. */
const timesReceived = (receiver: Receiver, keys: string[]) =>
  keys.map((key) => receiver.requests.filter((r) => mentions(r.body, key)).length);

/** The HTTP API of the start running in `dir`, as `.data/local.json` gives it to the folder. */
async function api(dir: string, path: string, init: RequestInit = {}): Promise<Response> {
  const local = JSON.parse(readFileSync(join(dir, '.data', 'local.json'), 'utf8')) as {
    api: { url: string; token: string };
  };
  return fetch(`${local.api.url}${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${local.api.token}`, 'Content-Type': 'application/json' },
  });
}

const silenceReasons = async (dir: string) =>
  ((await (await api(dir, '/silences')).json()) as { items: { reason: string }[] }).items.map(
    (s) => s.reason,
  );

const CONFIG = 'configs/soc.json';
const realEnv = { ALERTS_CONFIG: CONFIG, SECRETS_FILE: 'secrets.json' };

/** A folder with a config of two receivers, `configs/soc.json`, and its secrets (Slack's URL). */
async function folder(slack: Receiver, mail: Receiver): Promise<string> {
  // In this file's own folder (test/helpers/isolate.ts), removed after it.
  const dir = await mkdtemp(join(process.cwd(), 'configs-'));
  await mkdir(join(dir, 'configs'));
  await writeFile(
    join(dir, CONFIG),
    JSON.stringify({
      // The demo's sources, so the real run should find what the demo found.
      sources: {
        tenantEvents: { enabled: true, lookback: 'PT24H' },
        credentials: { domains: ['acme.test', 'example.com'], lookback: 'P7D' },
      },
      // The local emulator's rates (cli/commands/start.ts LOCAL_RATES), not the real tiers' pace.
      upstream: { requestsPerSecond: 40, searchRequestsPerSecond: 10 },
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
  await writeFile(join(dir, 'secrets.json'), JSON.stringify({ socSlack: slack.url }));
  return dir;
}

describe.concurrent('from the demo to one’s own config', { timeout: 240_000 }, () => {
  it('demo, dry run, real run, demo again: the real run sends what the dry run said, nothing of the demo’s state shows, the demo finds its own', async ({
    expect,
  }) => {
    const slack = await startReceiver();
    const mail = await startReceiver();
    const dir = await folder(slack, mail);

    // The demo, as a newcomer starts it; then a silence of everything made beside it.
    const demo = start(dir);
    const began = Date.now();
    await demo.waitFor(() => ALERT.test(demo.out()), 60_000);
    const demoFirst = Date.now() - began;
    await firstCycles(demo, expect);
    const made = await api(dir, '/silences', {
      method: 'POST',
      body: JSON.stringify({ match: {}, until: 'PT4H', reason: 'demo noise' }),
    });
    expect(made.status).toBe(201);
    expect(await stop(demo)).toBe(0);
    expect(demo.out()).toContain(
      `Alert config:         built-in demo config  (its state: table ${DEMO_TABLE})`,
    );
    const demoSent = passCounts(demo).terminal ?? 0;
    expect(demoSent).toBeGreaterThan(5);

    // The dry run: what each destination would get, nothing sent.
    const dry = start(dir, { ALERTS_CONFIG: CONFIG }, ['--dry-run']);
    await firstCycles(dry, expect);
    expect(await stop(dry)).toBe(0);
    expect(slack.requests.length + mail.requests.length).toBe(0);
    expect(logged(dry).join('\n')).not.toMatch(/\d+ sent/);
    const would = dryRunKeys(dir);
    expect(Object.keys(would).sort()).toEqual(['mail', 'soc']);
    // Every item the demo showed (not the few since its cursors), none held by its silence.
    expect(passCounts(dry)).toEqual({ soc: demoSent, mail: demoSent });
    expect(would.soc).toHaveLength(demoSent);
    expect(new Set(would.mail)).toEqual(new Set(would.soc));

    // For real, after the dry run: each destination gets each item the dry run named, once.
    const real = start(dir, realEnv);
    const realBegan = Date.now();
    await real.waitFor(() => real.out().includes('Ctrl-C stops it'), 60_000);
    // Beside it, with no SECRETS_FILE set, a command reads the running start's secrets (item 9).
    const test = runCliProcess(['destinations', 'test', 'soc'], { cwd: dir, env: { ALERTS_CONFIG: CONFIG } });
    await real.waitFor(() => slack.requests.length > 0 && mail.requests.length > 0, 60_000);
    const realFirst = Date.now() - realBegan;
    const soc = would.soc as string[];
    const email = would.mail as string[];
    const received = () => [...timesReceived(slack, soc), ...timesReceived(mail, email)].every((n) => n > 0);
    await real.waitFor(received, 60_000);
    await firstCycles(real, expect);
    const tested = await test;
    expect(tested.code, tested.err).toBe(0);
    expect(slack.requests.filter((r) => r.body.includes(TEST_MARK))).toHaveLength(1);
    expect(await silenceReasons(dir)).toEqual([]);
    expect(await stop(real)).toBe(0);
    expect(passCounts(real)).toEqual({ soc: demoSent, mail: demoSent });
    expect(timesReceived(slack, soc)).toEqual(soc.map(() => 1));
    expect(timesReceived(mail, email)).toEqual(email.map(() => 1));
    // The demo's table had only the demo's terminal in it: not adopted.
    expect(real.out()).not.toContain('keeps the table');
    expect(real.out()).toContain(
      `Alert config:         ${CONFIG}  (its state: table ${configTableName(CONFIG)})`,
    );

    // The demo again: its silence, its cursors (nothing new, nothing shown).
    const again = start(dir);
    await again.waitFor(
      () =>
        /poll events cycle: nothing new/.test(again.out()) &&
        /poll credentials cycle: nothing new/.test(again.out()),
      30_000,
    );
    expect(await silenceReasons(dir)).toEqual(['demo noise']);
    expect(await stop(again)).toBe(0);
    expect(again.out()).not.toMatch(ALERT);
    console.info(
      `first alert: the demo's ${demoFirst} ms after its start; the real config's ${realFirst} ms after its start (after --dry-run)`,
    );
    await Promise.all([slack.close(), mail.close()]);
  });

  // Beside the journey, one after the other: at most two starts at once, one a core.
  describe.concurrent('in folders of their own', () => {
    it.sequential('a .data/ from before each config had its own table: a real config whose deliveries it holds adopts it, says so once, re-sends nothing; the demo gets a fresh one', async ({
      expect,
    }) => {
      const slack = await startReceiver();
      const mail = await startReceiver();
      const dir = await folder(slack, mail);
      // Before the rule every config shared the one table: TABLE_NAME makes that .data/ again.
      const old = start(dir, { ...realEnv, TABLE_NAME: DEMO_TABLE });
      await firstCycles(old, expect);
      expect(await stop(old)).toBe(0);
      const sent = slack.requests.length + mail.requests.length;
      expect(sent).toBeGreaterThan(0);

      const adopted = start(dir, realEnv);
      await adopted.waitFor(cycled(adopted), 60_000);
      expect(await stop(adopted)).toBe(0);
      expect(adopted.out().match(/keeps the table/g)).toHaveLength(1);
      expect(adopted.out()).toContain(
        `${CONFIG} keeps the table ${DEMO_TABLE} of .data/ (its deliveries went to `,
      );
      expect(adopted.out()).toContain(`(its state: table ${DEMO_TABLE})`);
      expect(slack.requests.length + mail.requests.length).toBe(sent);

      // Settled for good in .data/tables.json, which every later start reads: nothing more is said,
      // the config keeps the old table, and the demo has one of its own.
      const data = join(dir, '.data');
      const said: string[] = [];
      for (const config of [CONFIG, 'configs/other.json'])
        await settleOldTable(data, config, 'http://127.0.0.1:9', (line) => said.push(line));
      expect(said).toEqual([]);
      expect(localTableFor(CONFIG, data)).toBe(DEMO_TABLE);
      expect(localTableFor(undefined, data)).toBe(FRESH_DEMO_TABLE);
      await Promise.all([slack.close(), mail.close()]);
    });

    it.sequential('Ctrl-C with a destination that never answers: the first says a second stops at once; the second does, leaving no lock and no local.json', async ({
      expect,
    }) => {
      const hung = await startReceiver({ hang: true });
      const mail = await startReceiver();
      const dir = await folder(hung, mail);
      const run = start(dir, realEnv);
      await run.waitFor(() => hung.requests.length > 0, 60_000);
      run.child.kill('SIGINT');
      await run.waitFor(() => run.err().includes('a second Ctrl-C stops at once'), 5_000);
      const at = Date.now();
      run.child.kill('SIGINT');
      expect(await run.exited).toBe(130);
      expect(Date.now() - at).toBeLessThan(2_000);
      expect(existsSync(join(dir, '.data', 'lock'))).toBe(false);
      expect(existsSync(join(dir, '.data', 'local.json'))).toBe(false);
      await Promise.all([hung.close(), mail.close()]);
    });
  });
});
