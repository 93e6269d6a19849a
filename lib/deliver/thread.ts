/**
 * Sending a digest as a thread, for a kind whose digests go as threads (its face's `threads`; a
 * Slack app): the parent, then each reply its renderer planned (`Rendered.thread`), at the
 * destination's pace, with the thread's progress written after every message the destination
 * accepts (state/threads.ts). A crash between the destination's answer and that write
 * repeats that one message, parent or reply; nothing else repeats, because the next pass resumes
 * the open threads of the destination first, with exactly their delivery records, before it reads
 * anything new (a new digest of other records would be a new thread). The digest's records are
 * marked sent only when the last reply is in; then the thread is forgotten.
 */
import { bodyOf } from '../destinations/kinds.ts';
import { webhookIdempotencyKey } from '../render/keys.ts';
import type { Rendered } from '../render/types.ts';
import type { DeliveryRecord } from '../state/records/record.ts';
import type { ThreadState, ThreadStore } from '../state/threads.ts';
import type { ResolvedDestination } from './destinations.ts';
import type { Posted, SendOutcome } from './outcome.ts';
import type { Payload, SendContext } from './senders.ts';
import { send } from './senders.ts';

export interface ThreadSend {
  destination: ResolvedDestination;
  threads: ThreadStore;
  ctx: SendContext;
  /** Waits for the next message's turn at the destination's pace; false when none comes in time. */
  turn(): Promise<boolean>;
  /** Counts a message sent (the pace's last send, the result's messages). */
  sent(): void;
  /** Test hook: after the destination accepted a message of a thread, before it is written down. */
  checkpoint?(step: 'parent-posted' | 'reply-posted'): void | Promise<void>;
}

/** How a thread's sending ended: all in, stopped by the budget, or refused at one message. */
export type ThreadOutcome =
  | { ok: true; posted: Posted; key: string }
  | { ok: false; outcome: Extract<SendOutcome, { ok: false }>; key: string; parentRefused: boolean }
  | { budget: true; key: string };

/** The key a digest's thread is kept under: the Idempotency-Key its records would give a webhook. */
export function threadKey(destination: string, deliveryIds: readonly string[]): string {
  return webhookIdempotencyKey(destination, [...deliveryIds]);
}

/** Sends `message` (a digest with `thread`) as a thread, from where an earlier run left it. */
export async function sendThread(t: ThreadSend, message: Rendered<Payload>): Promise<ThreadOutcome> {
  const { destination, threads } = t;
  const body = await bodyOf(destination);
  const key = threadKey(destination.name, message.deliveryIds);
  const state: ThreadState = await threads.begin(destination.name, key, message.deliveryIds);
  let parent = state.parent;
  if (!parent) {
    if (!(await t.turn())) return { budget: true, key };
    const outcome = await send(destination, message.payload, message.deliveryIds, t.ctx);
    t.sent();
    if (!outcome.ok) {
      // Nothing of the thread is in the destination: forget it, and the records retry as any others.
      await threads.finish(destination.name, key);
      return { ok: false, outcome, key, parentRefused: true };
    }
    // Where it landed, when the destination says (a Slack app: the channel and ts the replies need).
    parent = outcome.posted ?? { channel: '', ts: '' };
    await t.checkpoint?.('parent-posted');
    await threads.parentPosted(destination.name, key, parent);
  }
  const replies = message.thread ?? [];
  for (let i = state.repliesSent; i < replies.length; i++) {
    if (!(await t.turn())) return { budget: true, key };
    const outcome: SendOutcome = body.reply
      ? await body.reply(destination, replies[i], parent.ts ? parent : undefined, t.ctx)
      : { ok: false, permanent: true, error: `${destination.type} sends no thread replies` };
    t.sent();
    if (!outcome.ok) return { ok: false, outcome, key, parentRefused: false };
    await t.checkpoint?.('reply-posted');
    await threads.replied(destination.name, key, i + 1);
  }
  return { ok: true, posted: parent, key };
}

/**
 * The open threads of a destination, each with its records as they are now: those whose records
 * are all still pending are resumed (the caller renders them again, in the thread's order); one
 * whose records were settled otherwise (sent, and the thread not yet forgotten; dead) is forgotten
 * here, and what is still pending of it goes the usual way.
 */
export async function openThreads(
  threads: ThreadStore,
  destination: string,
  getMany: (ids: string[]) => Promise<Map<string, DeliveryRecord>>,
): Promise<{ resume: DeliveryRecord[][]; loose: DeliveryRecord[] }> {
  const resume: DeliveryRecord[][] = [];
  const loose: DeliveryRecord[] = [];
  for (const open of await threads.open(destination)) {
    const current = await getMany(open.ids);
    const pending = open.ids.flatMap((id) => {
      const r = current.get(id);
      return r && r.status === 'pending' ? [r] : [];
    });
    if (pending.length === open.ids.length && pending.length > 0) resume.push(pending);
    else {
      await threads.finish(destination, open.key);
      loose.push(...pending);
    }
  }
  return { resume, loose };
}
