/** Process entry of the CLI: wires real stdio, environment and signals to runCli. */
// The AWS SDK warns on Node 20 about its 2027 releases; the machine's Node version is the operator's call.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

import { redactor } from '../log.ts';
import { runCli } from './run.ts';

const controller = new AbortController();
let interrupted = 0;
const stop = () => {
  interrupted += 1;
  if (interrupted > 1) process.exit(130);
  controller.abort();
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);

const code = await runCli(
  process.argv.slice(2),
  {
    stdout: (text) => process.stdout.write(redactor.redact(text)),
    stderr: (text) => process.stderr.write(redactor.redact(text)),
    env: process.env,
    isTTY: Boolean(process.stderr.isTTY),
  },
  controller.signal,
);
process.exitCode = code;
process.off('SIGINT', stop);
process.off('SIGTERM', stop);
