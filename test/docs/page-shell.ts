/**
 * A docs page's commands in a shell of their own, block by block, beside the other pages' shells
 * (commands.test.ts). The shell lives as long as its page, so what a block exports the page's next
 * blocks see, as in a reader's terminal. The pages share one `npm start`, so they take turns where
 * it matters: a block that only reads runs beside any other block but one that changes silences;
 * one that acts (an action on an event, an account or an asset, a poll, a delivery) runs beside
 * readers but never beside another that acts, so two pages never act on one event at once; one
 * that changes silences runs alone, so one page's silence never shows in another page's count
 * before and after a block (commands.test.ts reads them around every block). What an action or a
 * poll changes, npm start's own cycles change at any time too: a reader's line does not hang on it.
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

/** Whether a block changes silences, which every block's before and after count: it then runs alone. */
export function changesSilences(text: string): boolean {
  return changes(text) && /silence/.test(text);
}

/** How a block takes its turn: beside anything but `alone`; `act` beside readers only; `alone`. */
export type Turn = 'read' | 'act' | 'alone';

/** The turn of a block's text: {@link changesSilences}, else {@link changes}, else a reader's. */
export function turnOf(text: string): Turn {
  return changesSilences(text) ? 'alone' : changes(text) ? 'act' : 'read';
}

/**
 * Readers beside readers and one actor, an actor beside readers, a block `alone` alone (`true` is
 * `alone`, `false` a reader); first come, first served, so no block is starved.
 */
export class Turns {
  private readonly running: Record<Turn, number> = { read: 0, act: 0, alone: 0 };
  private readonly waiting: { turn: Turn; go: () => void }[] = [];

  async hold<T>(kind: Turn | boolean, work: () => Promise<T>): Promise<T> {
    const turn: Turn = kind === true ? 'alone' : kind === false ? 'read' : kind;
    await new Promise<void>((go) => {
      this.waiting.push({ turn, go });
      this.next();
    });
    try {
      return await work();
    } finally {
      this.running[turn] -= 1;
      this.next();
    }
  }

  private fits(turn: Turn): boolean {
    const { read, act, alone } = this.running;
    if (alone > 0) return false;
    if (turn === 'alone') return read + act === 0;
    return turn === 'read' || act === 0;
  }

  private next(): void {
    for (let first = this.waiting[0]; first; first = this.waiting[0]) {
      if (!this.fits(first.turn)) return;
      this.waiting.shift();
      this.running[first.turn] += 1;
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
