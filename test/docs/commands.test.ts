/**
 * The docs' commands, run as a newcomer types them: every `sh` block of the README's quick start
 * and of docs/cli.md, api.md, actions.md and runbook.md, beside one real `npm start` in a fresh
 * folder (its package.json's scripts run this checkout's command, so `npm start` and
 * `npm run cli --` mean what they mean here). Each page runs in a shell of its own, top to bottom, since a reader may
 * open any one of them first: what a command exports, the page's next commands use. The commands
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

function run(command: string, args: string[], cwd: string, env: Record<string, string>) {
  return new Promise<{ code: number | null; out: string }>((done) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    child.on('close', (code) => done({ code, out }));
  });
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

describe('the docs commands beside npm start', () => {
  let dir = '';
  let start: ChildProcess | undefined;
  let startOut = '';
  const env = newcomerEnv();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ea-docs-'));
    // The package's own scripts, pointed at this checkout: `npm start` builds the command, then
    // runs it, as the package's does. `npm run cli` runs the command that build made, without the
    // package's build before it: that build is the one `npm start` just ran (and the tests' global
    // setup before it), from the same sources, and making it again before each of some sixty
    // commands took a third of this file's time. The command itself runs as typed, through npm.
    const build = `node ${join(PROJECT_ROOT, 'lib/cli/build.mjs')}`;
    const bin = `node ${join(PROJECT_ROOT, 'dist/exposure-alerts.mjs')}`;
    await writeFile(
      join(dir, 'package.json'),
      JSON.stringify({
        name: 'docs-folder',
        private: true,
        type: 'module',
        scripts: { start: `${build} && ${bin} start`, cli: bin },
      }),
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
  }, 40_000);

  afterAll(() => {
    if (start) interrupt(start);
  });

  it('npm start is up and has alerted', () => {
    expect(startOut).toMatch(/leaked logins/);
  });

  for (const page of pages) {
    const runnable = page.exists && page.commands.length > 0;
    it.skipIf(!runnable)(
      `${page.source}: every command runs as typed`,
      async () => {
        expect(startOut).toMatch(/leaked logins/);
        // The active silences before a block and after it, through the API (a curl: a CLI command
        // each time would add a second a block).
        const api = /HTTP API:\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(startOut)?.[1];
        const token = /Bearer (local-[0-9a-f]+)/.exec(startOut)?.[1];
        const silences = (block: number, when: 'before' | 'after') =>
          `echo "@@silences ${block} ${when}"; curl -s -H "Authorization: Bearer ${token}" "${api}/silences"; echo; echo "@@/silences"`;
        const script = page.commands
          .map((c, i, all) =>
            [
              ...(all[i - 1]?.block !== c.block ? [silences(c.block, 'before')] : []),
              `echo "@@begin ${i}"\n{ ${c.text}\n} 2>&1\necho "@@end ${i} $?"`,
              ...(all[i + 1]?.block !== c.block ? [silences(c.block, 'after')] : []),
            ].join('\n'),
          )
          .join('\n');
        const shell = await run('bash', ['-c', script], dir, env);
        const outputs = new Map<number, { code: number; out: string }>();
        for (const m of shell.out.matchAll(/@@begin (\d+)\n([\s\S]*?)@@end \1 (\d+)\n/g))
          outputs.set(Number(m[1]), { out: m[2] ?? '', code: Number(m[3]) });
        for (const [i, c] of page.commands.entries()) {
          const got = outputs.get(i);
          const where = `${c.source}: ${c.text}\n${got?.out ?? shell.out}`;
          expect(got?.code, where).toBe(0);
          expect(got?.out, where).toMatch(printed(c.expect));
        }
        // A block that makes something cleans it up: a silence left behind holds back real alerts
        // later (issue 47: docs/api.md's Idempotency-Key example left a 4-hour types=paste one).
        const active = new Map<string, string[]>();
        for (const m of shell.out.matchAll(/@@silences (\d+) (before|after)\n([\s\S]*?)\n@@\/silences/g)) {
          const { items } = JSON.parse(m[3] ?? '') as {
            items: { id: string; match: unknown; reason: string }[];
          };
          active.set(
            `${m[1]} ${m[2]}`,
            items.map((x) => `${x.id} ${JSON.stringify(x.match)} ${x.reason}`).sort(),
          );
        }
        for (const block of new Set(page.commands.map((c) => c.block))) {
          const first = page.commands.find((c) => c.block === block)?.text;
          expect(active.get(`${block} before`), `${page.source}: the block of "${first}"`).toBeDefined();
          expect(
            active.get(`${block} after`),
            `${page.source}: the block of "${first}" leaves silences`,
          ).toEqual(active.get(`${block} before`));
        }
      },
      // A page is some thirty commands, each a process through npm: minutes on a busy machine.
      180_000,
    );
  }

  it('stops cleanly on Ctrl-C', async () => {
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
