/**
 * The README's commands, run as a newcomer types them: every `sh` block of its "Commands", "HTTP
 * API" and "During an incident" sections, in order, in one shell, in a fresh folder where
 * `npm start` runs (the folder has a package.json whose scripts are this checkout's, so `npm run
 * cli --` and `npm start` mean what they mean here). The commands come from the README itself, so
 * it cannot drift from the product: each must exit 0 and print the line its `# →` comment shows
 * (`…` stands for anything). A block that must not run here (a long-running service, a deploy)
 * carries `<!-- docs-test: skip -->`, and the skipped blocks are counted.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/alerts-config.ts';

const SECTIONS = ['Commands', 'HTTP API', 'During an incident'];
const SKIP = '<!-- docs-test: skip -->';

interface Command {
  section: string;
  text: string;
  expect?: string;
}

/** The `sh` blocks of `sections`, in order: their commands (continuations joined), and the skipped blocks. */
function readmeCommands(
  readme: string,
  sections: readonly string[],
): { commands: Command[]; skipped: number } {
  const commands: Command[] = [];
  let skipped = 0;
  for (const section of sections) {
    const start = readme.indexOf(`\n## ${section}\n`);
    if (start < 0) throw new Error(`README has no section "${section}"`);
    const end = readme.indexOf('\n## ', start + 1);
    const body = readme.slice(start, end < 0 ? undefined : end);
    for (const m of body.matchAll(/(<!-- docs-test: skip -->\n)?```sh\n([\s\S]*?)```/g)) {
      if (m[1]?.trim() === SKIP) {
        skipped += 1;
        continue;
      }
      let pending = '';
      for (const line of (m[2] ?? '').split('\n')) {
        const expected = /^# → (.*)$/.exec(line);
        if (expected) {
          const last = commands.at(-1);
          if (last) last.expect = expected[1];
          continue;
        }
        if (!pending && (line.trim() === '' || line.startsWith('#'))) continue;
        if (line.endsWith('\\')) {
          pending += `${line}\n`;
          continue;
        }
        commands.push({ section, text: `${pending}${line}`.trim() });
        pending = '';
      }
    }
  }
  return { commands, skipped };
}

/** A shell process's environment without what would point a command elsewhere than the folder's npm start. */
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

let start: ChildProcess | undefined;
/** Ctrl-C as a terminal sends it: SIGINT to the whole process group (npm and the product). */
const interrupt = (child: ChildProcess) => {
  if (child.pid) process.kill(-child.pid, 'SIGINT');
};
afterAll(() => {
  if (start) interrupt(start);
});

describe('the README', () => {
  const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
  const { commands, skipped } = readmeCommands(readme, SECTIONS);

  it('shows its commands with what they print', () => {
    expect(commands.length).toBeGreaterThan(20);
    // Each shows a line of what it prints; an `export` prints nothing, by design.
    expect(
      commands.filter((c) => c.expect === undefined && !/^export /.test(c.text)).map((c) => c.text),
    ).toEqual([]);
    // The block that starts the emulator and dynalite alone: they run until stopped.
    expect(skipped).toBe(1);
  });

  it('every command of Commands, HTTP API and During an incident runs as typed beside npm start', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ea-readme-'));
    // The package's own scripts, pointed at this checkout: build the command, then run it.
    const build = `node ${join(PROJECT_ROOT, 'lib/cli/build.mjs')}`;
    const bin = `node ${join(PROJECT_ROOT, 'dist/exposure-alerts.mjs')}`;
    await writeFile(
      join(dir, 'package.json'),
      JSON.stringify({
        name: 'readme-folder',
        private: true,
        type: 'module',
        scripts: { start: `${build} && ${bin} start`, cli: `${build} && ${bin}` },
      }),
    );
    const env = newcomerEnv();
    start = spawn('npm', ['start'], {
      cwd: dir,
      env: { ...env, PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
      // A process group of its own, as a shell gives a foreground job: Ctrl-C reaches all of it.
      detached: true,
    });
    let startOut = '';
    start.stdout?.on('data', (d) => {
      startOut += d;
    });
    start.stderr?.on('data', (d) => {
      startOut += d;
    });
    // Up, and its first cycles delivered (`deliveries list --status sent` shows one).
    const end = Date.now() + 30_000;
    while (Date.now() < end && !/leaked logins/.test(startOut)) await new Promise((r) => setTimeout(r, 100));
    expect(startOut).toMatch(/leaked logins/);

    // One shell for all of it, in order: what one command exports, the next one uses.
    const script = commands
      .map((c, i) => `echo "@@begin ${i}"\n{ ${c.text}\n} 2>&1\necho "@@end ${i} $?"`)
      .join('\n');
    const shell = await run('bash', ['-c', script], dir, env);
    const outputs = new Map<number, { code: number; out: string }>();
    for (const m of shell.out.matchAll(/@@begin (\d+)\n([\s\S]*?)@@end \1 (\d+)\n/g))
      outputs.set(Number(m[1]), { out: m[2] ?? '', code: Number(m[3]) });
    for (const [i, c] of commands.entries()) {
      const got = outputs.get(i);
      const where = `${c.section}: ${c.text}\n${got?.out ?? shell.out}`;
      expect(got?.code, where).toBe(0);
      const pattern = new RegExp(
        (c.expect ?? '')
          .split('…')
          .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
          .join('.*'),
      );
      expect(got?.out, where).toMatch(pattern);
    }
    interrupt(start);
    // npm, interrupted with the rest, ends on the signal; the product says it stopped cleanly.
    await new Promise((done) => start?.on('close', done));
    expect(startOut).toContain('stopping: letting the running cycle finish');
    start = undefined;
  }, 180_000);
});
