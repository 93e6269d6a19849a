/**
 * The `serve` command for the console's browser tests, run in this process through the command
 * line's own entry (`runCli`: its config and secrets files, its logger, a real port) rather than
 * as a process of the built command: a process cost about a second of CPU per test file to start
 * on these two-core machines, and test/cli/serve.test.ts already runs serve as one.
 */
import { runCli } from '../../lib/cli/run.ts';

/**
 * The `serve` command, run in this process by the command line's entry as the built command runs
 * it, until `stop`; its address is the one it prints.
 */
export async function serve(env: Record<string, string>): Promise<{ url: string; stop(): Promise<void> }> {
  const stop = new AbortController();
  let out = '';
  let err = '';
  let listening: (url: string) => void = () => {};
  const heard = new Promise<string>((resolve) => {
    listening = resolve;
  });
  const exited = runCli(
    ['serve'],
    {
      env,
      isTTY: false,
      stdout: (text) => {
        out += text;
        const url = /API listening on (\S+)/.exec(out)?.[1];
        if (url) listening(url);
      },
      stderr: (text) => {
        err += text;
      },
    },
    stop.signal,
  );
  const url = await Promise.race([
    heard,
    exited.then((code) => {
      throw new Error(`serve exited with ${code} before it listened: ${err}`);
    }),
  ]);
  return {
    url,
    stop: async () => {
      stop.abort('SIGTERM');
      await exited;
    },
  };
}
