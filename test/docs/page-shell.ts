/**
 * A docs page's commands in a shell of their own, block by block, beside the other pages' shells
 * (commands.test.ts). The shell lives as long as its page, so what a block exports the page's next
 * blocks see, as in a reader's terminal. The pages share one `npm start`, so they take turns where
 * it matters: a block that only reads runs beside any other that only reads; one that changes what
 * the others read (a silence, an action, a poll) runs alone, so one page's silence never shows in
 * another page's count before and after a block, and two pages never act on one event at once.
 */
import { spawn } from 'node:child_process';

/** `npm run -s cli -- <these>` only read. Any other CLI command or npm script, or an HTTP POST, PUT, PATCH or DELETE, changes something. */
const READS = /^(status|token test|identity test|lookup|deliveries list|config|preview)\b/;

/** Whether a block's text changes what another page's block could read (see {@link READS}). */
export function changes(text: string): boolean {
  if (/-X\s*(POST|PUT|PATCH|DELETE)\b/.test(text)) return true;
  for (const m of text.matchAll(/\bnpm\b(.*)/g)) {
    const command = /^ run -s cli -- (.*)/.exec(m[1] ?? '')?.[1];
    if (command === undefined || !READS.test(command)) return true;
  }
  return false;
}

/** Readers beside readers, a writer alone; first come, first served, so a writer is never starved. */
export class Turns {
  private readers = 0;
  private writing = false;
  private readonly waiting: { alone: boolean; go: () => void }[] = [];

  async hold<T>(alone: boolean, work: () => Promise<T>): Promise<T> {
    await new Promise<void>((go) => {
      this.waiting.push({ alone, go });
      this.next();
    });
    try {
      return await work();
    } finally {
      if (alone) this.writing = false;
      else this.readers -= 1;
      this.next();
    }
  }

  private next(): void {
    for (let first = this.waiting[0]; first; first = this.waiting[0]) {
      if (this.writing || (first.alone && this.readers > 0)) return;
      this.waiting.shift();
      if (first.alone) this.writing = true;
      else this.readers += 1;
      first.go();
    }
  }
}

export interface PageShell {
  /** Runs `script` in the shell (its stdin is not the shell's: /dev/null) and resolves when it is done. */
  run(script: string): Promise<void>;
  /** Ends the shell; resolves with everything it printed, stdout and stderr as they came. */
  close(): Promise<string>;
}

/** A bash that reads its script from this process, a part at a time. */
export function pageShell(cwd: string, env: Record<string, string>): PageShell {
  const child = spawn('bash', [], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  // What stdout said since the last part ended: where the part's end marker is looked for.
  let part = '';
  let ran = 0;
  let waiting: { marker: string; done: () => void } | undefined;
  const closed = new Promise<void>((done) => child.on('close', () => done()));
  child.stdout.on('data', (d: Buffer) => {
    out += d;
    part += d;
    if (waiting && part.endsWith(waiting.marker)) {
      out = out.slice(0, out.lastIndexOf(waiting.marker));
      part = '';
      waiting.done();
      waiting = undefined;
    }
  });
  child.stderr.on('data', (d: Buffer) => {
    out += d;
  });
  return {
    run(script) {
      ran += 1;
      const marker = `@@ran ${ran}\n`;
      const done = new Promise<void>((resolve) => {
        waiting = { marker, done: resolve };
      });
      child.stdin.write(`{\n${script}\n} </dev/null 2>&1\necho "@@ran ${ran}"\n`);
      // A shell that ends mid-part (an `exit` in a block) ends the part too.
      return Promise.race([done, closed]);
    },
    async close() {
      child.stdin.end();
      await closed;
      return out;
    },
  };
}
