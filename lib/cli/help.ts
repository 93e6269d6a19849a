/**
 * What the CLI says of itself: the top-level help, one command's help (`<command> --help`), one
 * group's (`events --help`: the commands that share a first word, a line each), and the version.
 * Groups are not declared anywhere: a group is the first word of commands of two words or more,
 * so a new command joins its group's help by being in the list.
 */
import { readFileSync } from 'node:fs';
import { projectFile } from '../root.ts';
import type { Command } from './command.ts';
import { commands } from './commands/index.ts';

export function helpText(): string {
  return [
    'usage: exposure-alerts <command> [options]',
    '',
    ...commands.flatMap((c) => [`  ${c.usage}`, `      ${c.summary}`]),
    '',
    '`exposure-alerts <command> --help` says more of one command (`events --help`, of a group); --version prints the version.',
    'Exit codes: 0 ok, 1 failure, 2 usage or configuration error, 3 upstream rejected the credentials.',
    '',
  ].join('\n');
}

/** `<command> --help`: its usage, what it does, each option, and one example. */
export function commandHelp(command: Command): string {
  const options = Object.entries(command.options ?? {}).map(([name, o]) => {
    const flag = `--${name}${o.type === 'string' ? ' <value>' : ''}`;
    return [flag, command.optionHelp?.[name] ?? ''] as const;
  });
  const width = Math.max(0, ...options.map(([flag]) => flag.length));
  return [
    `usage: exposure-alerts ${command.usage}`,
    '',
    command.summary,
    ...(command.details?.length ? ['', ...command.details] : []),
    ...(options.length
      ? ['', 'options:', ...options.map(([flag, text]) => `  ${flag.padEnd(width)}  ${text}`)]
      : []),
    '',
    'example:',
    `  ${command.example}`,
    '',
  ].join('\n');
}

/** The commands whose first word is `word` and that have more words (`events ignore`, ...). */
export function groupMembers(word: string | undefined): Command[] {
  return commands.filter((c) => c.path.length > 1 && c.path[0] === word);
}

/** `<group> --help`: each command of the group on a line of its own, with what it does. */
export function groupHelp(word: string, members: readonly Command[]): string {
  const names = members.map((c) => c.path.slice(1).join(' '));
  const width = Math.max(...names.map((n) => n.length));
  return [
    `usage: exposure-alerts ${word} <command> [options]`,
    '',
    ...members.map((c, i) => `  ${(names[i] ?? '').padEnd(width)}  ${c.summary}`),
    '',
    `\`exposure-alerts ${word} <command> --help\` says more of one, e.g. \`exposure-alerts ${members[0]?.path.join(' ')} --help\`.`,
    '',
  ].join('\n');
}

/** The package's version (package.json), for --version. */
export function version(): string {
  const pkg = JSON.parse(readFileSync(projectFile('package.json'), 'utf8')) as { version: string };
  return pkg.version;
}
