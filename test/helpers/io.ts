/** An Io that keeps what a command printed, for assertions. */
import type { Io } from '../../lib/cli/command.ts';

export function captureIo(env: Record<string, string | undefined> = {}): Io & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    env,
    isTTY: false,
    stdout: (text: string) => {
      io.out += text;
    },
    stderr: (text: string) => {
      io.err += text;
    },
  };
  return io;
}
