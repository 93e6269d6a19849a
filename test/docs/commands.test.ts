/**
 * The docs' commands, run as a newcomer types them: every `sh` block of the README's quick start
 * and of docs/cli.md, api.md, actions.md and runbook.md, beside one real `npm start` in a fresh
 * folder (its package.json's scripts are the package's, run on this checkout, so `npm start` and
 * `npm run cli --` mean what they mean here). Each page runs in a shell of its own, top to bottom,
 * since a reader may open any one of them first: what a command exports, the page's next commands
 * use. The pages run at once, taking turns where one could see another's doing (page-shell.ts:
 * readers beside anything, actions one at a time, a silence's block alone);
 * `npm run -s cli -- …` runs the folder's `cli` script as npm would, without npm's own half
 * second of start each time (npm itself runs `npm start`). The commands
 * come from the pages themselves, so the pages cannot drift from the product: each must exit 0 and
 * print the line of its `# → ` comment (`…` stands for anything). A block that cannot run here (a
 * deploy, an AWS CLI call, a service that runs until stopped) carries `<!-- docs-test: skip -->`;
 * the skipped blocks are counted in each test's name. A page not written yet is reported skipped.
 * A block leaves the silences as it found them: one that makes a silence expires it (or makes it
 * with `?dryRun=true`), since a reader's silence left behind holds back their real alerts.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/alerts-config.ts';
import { type Command, section, shCommands } from './markdown.ts';
import { pageShell, Turns, turnOf } from './page-shell.ts';

/** The pages that show commands, in the order they run; `section` limits a page to one `## ` part. */
const PAGES: { file: string; section?: string }[] = [
  { file: 'README.md', section: 'Quick start' },
  { file: 'docs/cli.md' },
  { file: 'docs/api.md' },
  { file: 'docs/actions.md' },
  { file: 'docs/runbook.md' },
];

interface Page {
  source: string;
  exists: boolean;
  commands: Command[];
  skipped: number;
  /** Why the page cannot be read for commands (a README without its quick start). */
  missing?: string;
}

function readPage({ file, section: title }: { file: string; section?: string }): Page {
  const path = join(PROJECT_ROOT, file);
  const source = title ? `${file} "${title}"` : file;
  if (!existsSync(path)) return { source, exists: false, commands: [], skipped: 0 };
  const markdown = readFileSync(path, 'utf8');
  const body = title ? section(markdown, title) : markdown;
  if (body === undefined)
    return { source, exists: true, commands: [], skipped: 0, missing: `no "## ${title}"` };
  return { source, exists: true, ...shCommands(body, source) };
}

/** A shell's environment without what would point a command elsewhere than the folder's npm start. */
function newcomerEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined) continue;
    if (
      /^(DYNAMODB_ENDPOINT|TABLE_NAME|AWS_.*|EXPOSURE_.*|ALERTS_CONFIG|SECRETS?_.*|LOG_LEVEL|PORT|API_URL|TOKEN)$/.test(
        k,
      )
    )
      continue;
    env[k] = v;
  }
  return {
    ...env,
    PATH: `${join(PROJECT_ROOT, 'node_modules/.bin')}:${env.PATH ?? ''}`,
    NO_COLOR: '1',
    AWS_EC2_METADATA_DISABLED: 'true',
    npm_config_update_notifier: 'false',
  };
}

/** `…` in a `# → ` line stands for anything; the rest is literal. */
function printed(expected: string | undefined): RegExp {
  return new RegExp(
    (expected ?? '')
      .split('…')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*'),
  );
}

/** Ctrl-C as a terminal sends it: SIGINT to the whole process group (npm and the product). */
const interrupt = (child: ChildProcess) => {
  if (child.pid) process.kill(-child.pid, 'SIGINT');
};

const pages = PAGES.map(readPage);

describe('the docs pages that show commands', () => {
  for (const page of pages) {
    const name = `${page.source}: ${page.commands.length} commands to run, ${page.skipped} blocks skipped`;
    it.skipIf(!page.exists)(page.exists ? name : `${page.source}: not written yet`, () => {
      expect(page.missing, page.source).toBeUndefined();
      // A page of commands shows at least one that runs here, or the test covers nothing of it.
      expect(page.commands.length, page.source).toBeGreaterThan(0);
      // Each shows a line of what it prints; an `export` prints nothing, by design.
      expect(
        page.commands.filter((c) => c.expect === undefined && !/^export /.test(c.text)).map((c) => c.text),
      ).toEqual([]);
    });
  }
});

/** The package's scripts, pointed at this checkout: `node lib/cli/dev.mjs` runs `node '<root>/lib/cli/dev.mjs'`. */
function scriptsHere(): { start: string; cli: string } {
  const { scripts } = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const here = (script = '') =>
    script.replace(
      /(^|\s)((?:lib|dist)\/\S+)/g,
      (_, space: string, path: string) => `${space}'${join(PROJECT_ROOT, path)}'`,
    );
  return { start: here(scripts.start), cli: here(scripts.cli) };
}

/**
 * What npm does for `npm run -s cli -- <args>`, in the page's shell: the folder's `cli` script with
 * the arguments after it (EA_CLI holds the script). Any other npm command is npm's.
 */
const NPM_RUN_CLI = `npm() {
  if [ "$1 $2 $3 $4" = 'run -s cli --' ]; then shift 4; eval "$EA_CLI"' "$@"'; else command npm "$@"; fi
}`;

describe('the docs commands beside npm start', () => {
  let dir = '';
  let start: ChildProcess | undefined;
  let startOut = '';
  const scripts = scriptsHere();
  const env = { ...newcomerEnv(), EA_CLI: scripts.cli };
  /**
   * Each runnable page's run, started together once npm start is up: its shell's output, and the
   * active silences before and after each block (`<block> before`, `<block> after`).
   */
  let runs: (Promise<{ out: string; active: Map<string, string[]> }> | undefined)[] = [];

  /**
   * The page's blocks, in order, each with the active silences before and after it, read through
   * the API by this process within the block's turn (a curl in the shell would be two more
   * processes a block).
   */
  async function runPage(page: Page, turns: Turns): Promise<{ out: string; active: Map<string, string[]> }> {
    const api = /HTTP API:\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(startOut)?.[1];
    const token = /Bearer (local-[0-9a-f]+)/.exec(startOut)?.[1];
    const active = new Map<string, string[]>();
    const silences = async () => {
      const response = await fetch(`${api}/silences`, { headers: { authorization: `Bearer ${token}` } });
      const { items } = (await response.json()) as {
        items: { id: string; match: unknown; reason: string }[];
      };
      return items.map((x) => `${x.id} ${JSON.stringify(x.match)} ${x.reason}`).sort();
    };
    const shell = pageShell(dir, env);
    await shell.run(NPM_RUN_CLI);
    for (const block of new Set(page.commands.map((c) => c.block))) {
      const commands = page.commands.map((c, i) => ({ ...c, i })).filter((c) => c.block === block);
      const script = commands
        .map((c) => `echo "@@begin ${c.i}"\n{ ${c.text}\n} 2>&1\necho "@@end ${c.i} $?"`)
        .join('\n');
      await turns.hold(turnOf(commands.map((c) => c.text).join('\n')), async () => {
        active.set(`${block} before`, await silences());
        await shell.run(script);
        active.set(`${block} after`, await silences());
      });
    }
    return { out: await shell.close(), active };
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ea-docs-'));
    await writeFile(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'docs-folder', private: true, type: 'module', scripts }),
    );
    start = spawn('npm', ['start'], {
      cwd: dir,
      env: { ...env, PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
      // A process group of its own, as a shell gives a foreground job: Ctrl-C reaches all of it.
      detached: true,
    });
    start.stdout?.on('data', (d) => {
      startOut += d;
    });
    start.stderr?.on('data', (d) => {
      startOut += d;
    });
    // Up, and its first cycles delivered (the leaked logins' digest is printed).
    const end = Date.now() + 30_000;
    while (Date.now() < end && !/leaked logins/.test(startOut)) await new Promise((r) => setTimeout(r, 100));
    const turns = new Turns();
    runs = pages.map((page) =>
      page.exists && page.commands.length > 0 && /leaked logins/.test(startOut)
        ? runPage(page, turns).catch((error: unknown) => ({
            out: `the page's shell failed: ${error}`,
            active: new Map<string, string[]>(),
          }))
        : undefined,
    );
  }, 40_000);

  afterAll(() => {
    if (start) interrupt(start);
  });

  it('npm start is up and has alerted', () => {
    expect(startOut).toMatch(/leaked logins/);
  });

  for (const [index, page] of pages.entries()) {
    const runnable = page.exists && page.commands.length > 0;
    it.skipIf(!runnable)(
      `${page.source}: every command runs as typed`,
      async () => {
        expect(startOut).toMatch(/leaked logins/);
        const { out, active } = (await runs[index]) ?? { out: '', active: new Map<string, string[]>() };
        const outputs = new Map<number, { code: number; out: string }>();
        for (const m of out.matchAll(/@@begin (\d+)\n([\s\S]*?)@@end \1 (\d+)\n/g))
          outputs.set(Number(m[1]), { out: m[2] ?? '', code: Number(m[3]) });
        for (const [i, c] of page.commands.entries()) {
          const got = outputs.get(i);
          const where = `${c.source}: ${c.text}\n${got?.out ?? out}`;
          expect(got?.code, where).toBe(0);
          expect(got?.out, where).toMatch(printed(c.expect));
        }
        // A block that makes something cleans it up: a silence left behind holds back real alerts
        // later (issue 47: docs/api.md's Idempotency-Key example left a 4-hour types=paste one).
        for (const block of new Set(page.commands.map((c) => c.block))) {
          const first = page.commands.find((c) => c.block === block)?.text;
          expect(active.get(`${block} before`), `${page.source}: the block of "${first}"`).toBeDefined();
          expect(
            active.get(`${block} after`),
            `${page.source}: the block of "${first}" leaves silences`,
          ).toEqual(active.get(`${block} before`));
        }
      },
      // The pages run together from the start, so a page's time is nearly the whole run's: some ten
      // seconds alone, minutes on a machine with many times more work than cores.
      300_000,
    );
  }

  it('stops cleanly on Ctrl-C', async () => {
    await Promise.all(runs);
    const child = start;
    expect(child).toBeDefined();
    if (!child) return;
    const closed = new Promise((done) => child.on('close', done));
    interrupt(child);
    // npm, interrupted with the rest, ends on the signal; the product says it stopped cleanly.
    await closed;
    start = undefined;
    expect(startOut).toContain('stopping: letting the running cycle finish');
  }, 30_000);
});
