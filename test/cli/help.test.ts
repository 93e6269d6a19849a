/**
 * Help and version as every CLI has them: `<command> --help` (and `help <command>`) prints the
 * command's usage, what it does, each option and one example; `--version` / `-V` the version; an
 * unknown option names itself and the usage; the top-level help speaks of what a user does.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/alerts-config.ts';
import { commands } from '../../lib/cli/commands/index.ts';
import { runCli } from '../../lib/cli/run.ts';
import { runCliProcess } from '../helpers/cli-process.ts';
import { captureIo } from '../helpers/io.ts';

const run = async (argv: string[]) => {
  const io = captureIo({});
  const code = await runCli(argv, io);
  return { code, out: io.out, err: io.err };
};

describe('help', () => {
  it.each(commands.map((c) => [c.path.join(' '), c] as const))(
    '%s --help: usage, summary, every option explained, an example',
    async (name, command) => {
      const { code, out, err } = await run([...command.path, '--help']);
      expect(code).toBe(0);
      expect(err).toBe('');
      expect(out.startsWith(`usage: exposure-alerts ${command.usage}\n\n${command.summary}\n`)).toBe(true);
      for (const option of Object.keys(command.options ?? {})) {
        expect(command.optionHelp?.[option], `${name} --${option}`).toMatch(/\w{3}/);
        expect(out).toMatch(new RegExp(`^  --${option}( <value>)?\\s+\\S`, 'm'));
      }
      expect(out).toContain(`example:\n  ${command.example}\n`);
      expect(command.example).toMatch(new RegExp(`exposure-alerts ${name}`));
      // `help <command>` says the same.
      expect((await run(['help', ...command.path])).out).toBe(out);
    },
  );

  it('the top-level help speaks of what a user does, not of endpoint numbers, and points to --help', async () => {
    const { code, out } = await run(['help']);
    expect(code).toBe(0);
    expect(out).not.toMatch(/endpoint \d/);
    expect(out).toContain('check the API token');
    expect(out).toContain('`exposure-alerts <command> --help`');
  });

  it('--version and -V print the package version, through the real CLI', async () => {
    const { version } = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8'));
    for (const flag of ['--version', '-V']) {
      const p = await runCliProcess([flag]);
      expect(p.code).toBe(0);
      expect(p.out).toBe(`exposure-alerts ${version}\n`);
    }
    const help = await runCliProcess(['status', '--help']);
    expect(help.code).toBe(0);
    expect(help.out).toContain('usage: exposure-alerts status [--json]');
  });

  it('-v prints the version too, through the real CLI', async () => {
    const { version } = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8'));
    const p = await runCliProcess(['-v']);
    expect(p).toMatchObject({ code: 0, out: `exposure-alerts ${version}\n`, err: '' });
  });

  // Every first word shared by commands of two words: events, silences, config, lookup, ...
  const groups = [...new Set(commands.filter((c) => c.path.length > 1).map((c) => c.path[0] as string))];

  it('the groups are the ones a user meets', () => {
    for (const group of [
      'events',
      'silences',
      'config',
      'lookup',
      'deliveries',
      'destinations',
      'poll',
      'assets',
      'token',
    ])
      expect(groups).toContain(group);
  });

  it.each(groups)('%s --help: each command of the group on a line of its own', async (group) => {
    const members = commands.filter((c) => c.path.length > 1 && c.path[0] === group);
    const { code, out, err } = await run([group, '--help']);
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toMatch(new RegExp(`^usage: exposure-alerts ${group} <command> \\[options\\]\n`));
    for (const member of members) {
      const name = member.path.slice(1).join(' ');
      const lines = out.split('\n').filter((l) => l.startsWith(`  ${name} `));
      expect(lines, name).toHaveLength(1);
      expect(lines[0]).toContain(member.summary);
    }
    expect(out).toContain(`\`exposure-alerts ${group} <command> --help\``);
    // `help <group>` and `-h` say the same.
    expect((await run(['help', group])).out).toBe(out);
    expect((await run([group, '-h'])).out).toBe(out);
  });

  it('events, silences, config and lookup --help, through the real CLI', async () => {
    const asked = ['events', 'silences', 'config', 'lookup'];
    const answers = await Promise.all(asked.map((group) => runCliProcess([group, '--help'])));
    for (const [i, p] of answers.entries()) {
      expect(p.code, p.err).toBe(0);
      expect(p.err).toBe('');
      expect(p.out).toBe((await run([asked[i] as string, '--help'])).out);
    }
  });

  it('a group alone shows its commands on stderr, exit 2; a wrong command of it names the right ones', async () => {
    const alone = await run(['events']);
    expect(alone.code).toBe(2);
    expect(alone.out).toBe('');
    expect(alone.err).toMatch(/^usage: exposure-alerts events <command>/);
    const wrong = await run(['events', 'ignroe', 'x']);
    expect(wrong.code).toBe(2);
    expect(wrong.err).toBe(
      'exposure-alerts: unknown command "events ignroe x": events takes ignore, remediate, unignore, unremediate (run exposure-alerts events --help)\n',
    );
  });

  it('an unknown option names the option and the usage, in one balanced line', async () => {
    const { code, err } = await run(['silences', 'list', '--colour']);
    expect(code).toBe(2);
    expect(err).toBe(
      'exposure-alerts: unknown option --colour for silences list (usage: exposure-alerts silences list|query [key=value...] [--all] [-q] [--json])\n',
    );
    const value = await run(['status', '--json=yes']);
    expect(value.err).toBe(
      'exposure-alerts: --json takes no value (usage: exposure-alerts status [--json])\n',
    );
    const missing = await run(['deliveries', 'list', '--status']);
    expect(missing.err).toMatch(/^exposure-alerts: --status needs a value \(usage: /);
  });

  it('--limit -3 says what is wrong with it', async () => {
    const { code, err } = await run(['deliveries', 'list', '--limit', '-3']);
    expect(code).toBe(2);
    expect(err).toBe('exposure-alerts: --limit must be a whole number, at least 1 (got "-3")\n');
  });
});
