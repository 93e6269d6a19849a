/**
 * The store of digests being posted as threads (thread-records.ts holds them and says how), as the
 * delivery pass holds it (deliver/types.ts `threads`): the records' code is loaded when a pass
 * first keeps or resumes a thread, which only a destination that threads its digests does.
 */
import { lazily } from '../lazy.ts';
import type { TableIo } from './io.ts';
import type { ThreadRecords, ThreadState } from './thread-records.ts';

export type { ThreadState } from './thread-records.ts';

const threadRecords = lazily(
  'the threads of digests (state/thread-records.ts)',
  () => import('./thread-records.ts'),
);

export class ThreadStore {
  private records?: ThreadRecords;
  constructor(private readonly io: TableIo) {}

  private async loaded(): Promise<ThreadRecords> {
    const { ThreadRecords } = await threadRecords();
    this.records ??= new ThreadRecords(this.io);
    return this.records;
  }

  /** The thread of `key`: the one a crash left, or a new one for `ids`. */
  async begin(destination: string, key: string, ids: readonly string[]): Promise<ThreadState> {
    return (await this.loaded()).begin(destination, key, ids);
  }

  /** The threads of `destination` still being posted. */
  async open(destination: string): Promise<ThreadState[]> {
    return (await this.loaded()).open(destination);
  }

  async parentPosted(
    destination: string,
    key: string,
    parent: { channel: string; ts: string },
  ): Promise<void> {
    return (await this.loaded()).parentPosted(destination, key, parent);
  }

  async replied(destination: string, key: string, repliesSent: number): Promise<void> {
    return (await this.loaded()).replied(destination, key, repliesSent);
  }

  /** Forgets a thread: posted whole, its records marked; or never begun (its parent refused). */
  async finish(destination: string, key: string): Promise<void> {
    return (await this.loaded()).finish(destination, key);
  }
}
