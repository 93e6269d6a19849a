/**
 * Process entry of the CLI: wires real stdio, environment and signals to runCli.
 *
 * The first SIGINT or SIGTERM aborts the run's signal with the signal's name: a command with safe
 * points stops at the next one, any other is dropped where it stands (run.ts). The second one ends
 * the process at once. Every line of output goes through here, so here a stdout that nobody reads
 * any more (`exposure-alerts config schema | head -1`) ends the command quietly, with exit 0, as a
 * closed pipe ends the classic Unix tools, instead of an unhandled EPIPE and its stack trace.
 */
// The AWS SDK warns on Node 20 about its 2027 releases; the machine's Node version is the operator's call.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

import { redactor } from '../log.ts';
import { runCli } from './run.ts';

const CODES = { SIGINT: 130, SIGTERM: 143 } as const;

const controller = new AbortController();
const stop = (name: keyof typeof CODES) => {
  if (controller.signal.aborted) process.exit(CODES[name]);
  controller.abort(name);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);

let stdoutClosed = false;
process.stdout.on('error', () => {
  stdoutClosed = true;
  if (!controller.signal.aborted) controller.abort('EPIPE');
});
// A stderr that cannot be written has no one left to tell.
process.stderr.on('error', () => {});

const code = await runCli(
  process.argv.slice(2),
  {
    stdout: (text) => {
      if (!stdoutClosed) process.stdout.write(redactor.redact(text));
    },
    stderr: (text) => process.stderr.write(redactor.redact(text)),
    env: process.env,
    isTTY: Boolean(process.stderr.isTTY),
    ...(process.stdout.isTTY ? { columns: process.stdout.columns } : {}),
  },
  controller.signal,
);
process.exitCode = code;
process.off('SIGINT', stop);
process.off('SIGTERM', stop);
// A run that was stopped may have left work it no longer waits for (a request of a command that
// was dropped where it stood): nothing of it is wanted now.
if (controller.signal.aborted) process.exit(code);
