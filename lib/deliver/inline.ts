/**
 * Inline delivery: while an exclusive stream is polled, its new deliveries to destinations whose
 * kind says so (its face's `inline`: a generic webhook) are sent page by page, and their records
 * are created with the outcome (`sent`) instead of being created `pending` and read back by the
 * delivery pass. Such a kind takes every item with no digest and no pace, so sending a page's items
 * at once changes nothing it receives but the batching; the others (Slack, e-mail, the console…)
 * keep their digests and go through the delivery pass.
 *
 * Guarantees, as in docs/architecture.md: a record is written right after its message was accepted, before
 * the stream's cursor moves past the page. A crash between the two resends that message on the
 * next run (the page is read again and its items are still absent): the one duplicate allowed.
 * Records are created here under the same rule as any batch creation: the stream is exclusive
 * and its lease has comfortably long to run (poll/page.ts `processPage` checks both, the lease
 * against LEASE_SAFE_MS, before it hands a page's records here).
 *
 * Any failure hands over to the delivery pass, and the destination is not sent to inline again
 * this cycle (nor is one whose send took longer than `slowMs`: a slow destination holds up polling
 * for one send at most). A message that failed for now is recorded by the same rule as in the pass
 * (retry.ts): one attempt, its error, the next attempt after the backoff or the `Retry-After` asked
 * for (at most an hour); a 429 costs no attempt and pauses the destination for every run.
 * The records of a message refused for good (a 413 included: the pass splits it), not rendered, or
 * with no time left to send are created `pending` and due now, so the pass handles them (dead
 * records, reporting the refusal).
 *
 * Inline delivery holds no lease on the destination, so before its first send of a cycle it reads
 * the destination's state: a destination paused by any run, or known to refuse large bodies, is
 * left to the pass for the cycle.
 */

import { kindOf } from '../destinations/kinds.ts';
import type { Logger } from '../log.ts';
import type { Rendered } from '../render/types.ts';
import { pauseLeft } from '../state/destinations.ts';
import type { DeliveryRecord } from '../state/records/record.ts';
import type { ResolvedDestination } from './destinations.ts';
import { recordToAlert } from './messages.ts';
import { markFailed, markRateLimited, markSent, retryAt, retryDelayMs } from './retry.ts';
import { type Payload, type SendFailure, send, sendContext } from './senders.ts';
import type { DeliverDeps, DestinationResult } from './types.ts';

/** A send slower than this ends inline delivery to its destination for the cycle. */
export const INLINE_SLOW_MS = 2_000;

interface Target {
  destination: ResolvedDestination;
  enabled: boolean;
  /** The read of the destination's state, once a cycle (shared by pages in flight). */
  checked?: Promise<void>;
  messages: number;
  sent: number;
  retrying: number;
}

export class InlineDelivery {
  private readonly targets = new Map<string, Target>();

  constructor(
    private readonly deps: DeliverDeps,
    private readonly options: { slowMs?: number } = {},
  ) {
    for (const [name, destination] of deps.destinations) {
      if (kindOf(destination.type).inline) {
        this.targets.set(name, { destination, enabled: true, messages: 0, sent: 0, retrying: 0 });
      }
    }
  }

  /** Whether new pending deliveries to `destination` are sent inline (now). */
  accepts(destination: string): boolean {
    return this.targets.get(destination)?.enabled === true;
  }

  /**
   * Sends `records` (new, pending, all to `destination`), then creates each message's records
   * through `create` with the outcome. Returns how many were sent.
   */
  async deliver(
    destination: string,
    records: DeliveryRecord[],
    create: (records: DeliveryRecord[]) => Promise<void>,
    context: { deadline: number; signal?: AbortSignal },
  ): Promise<number> {
    const { clock, logger } = this.deps;
    const target = this.targets.get(destination);
    if (!target || records.length === 0) {
      await create(records);
      return 0;
    }
    const log = logger.child({ destination, inline: true });
    target.checked ??= this.check(target, log);
    await target.checked;
    if (!target.enabled) {
      await create(records);
      return 0;
    }
    let messages: Rendered<Payload>[];
    try {
      messages = await this.deps.render(
        target.destination,
        records.map((r) => recordToAlert(r, this.deps.tenantOf)),
        new Date(clock.now()),
      );
    } catch (error) {
      log.warn('could not render inline; the delivery pass takes over', { error });
      target.enabled = false;
      await create(records);
      return 0;
    }
    const ctx = sendContext(this.deps, context.signal);
    const byId = new Map(records.map((r) => [r.id, r]));
    let sent = 0;
    for (const message of messages) {
      const batch = message.deliveryIds.flatMap((id) => {
        const record = byId.get(id);
        byId.delete(id);
        return record ? [record] : [];
      });
      if (batch.length === 0) continue;
      if (!target.enabled || context.deadline - clock.now() <= ctx.timeoutMs) {
        await create(batch);
        continue;
      }
      const started = clock.now();
      const outcome = await send(target.destination, message.payload, message.deliveryIds, ctx);
      if (outcome.ok) {
        await this.deps.checkpoint?.('accepted', message.deliveryIds);
        markSent(batch, clock.now());
        target.messages += 1;
        target.sent += batch.length;
        sent += batch.length;
        this.deps.metrics.count('DeliveriesSent', batch.length, { destination });
      } else {
        target.enabled = false;
        target.messages += 1;
        // A permanent refusal stays pending and due now: the pass records it and reports it.
        if (!outcome.permanent) {
          await this.failed(destination, batch, outcome);
          target.retrying += batch.length;
          this.deps.metrics.count('DeliveriesFailed', batch.length, { destination });
        }
        log.warn('inline send failed; the delivery pass takes over', {
          status: outcome.status,
          error: outcome.error,
          deliveries: batch.length,
          nextAttemptAt: batch[0]?.nextAttemptAt,
        });
      }
      const took = clock.now() - started;
      if (target.enabled && took > (this.options.slowMs ?? INLINE_SLOW_MS)) {
        target.enabled = false;
        log.info('destination is slow; the delivery pass takes over for this cycle', { ms: took });
      }
      await create(batch);
    }
    // Anything no message covered stays pending for the delivery pass.
    if (byId.size) await create([...byId.values()]);
    return sent;
  }

  /**
   * Records a message that failed for now. Its records are new: this was their first attempt, or
   * their first 429. They are all due at one time, and a 429 or a `Retry-After` pauses the
   * destination until then for every run, the pass included (as after its own 429).
   */
  private async failed(destination: string, batch: DeliveryRecord[], outcome: SendFailure): Promise<void> {
    const now = this.deps.clock.now();
    const random = drawOnce(this.deps.random);
    const until = Date.parse(retryAt(now, retryDelayMs(1, outcome.retryAfterMs, random)));
    if (outcome.rateLimited) markRateLimited(batch, outcome, now, until);
    else markFailed(batch, outcome, now, random);
    if (outcome.rateLimited || outcome.retryAfterMs !== undefined)
      await this.deps.destinationState.extendPause(destination, until, now);
  }

  /** Leaves the destination to the pass this cycle if it is paused, or refused a large body lately. */
  private async check(target: Target, log: Logger): Promise<void> {
    const state = await this.deps.destinationState.peek(target.destination.name);
    if (pauseLeft(state.pause, this.deps.clock.now()) > 0 || state.tooLarge) {
      target.enabled = false;
      log.info('destination is paused or refuses large bodies; the delivery pass takes over for this cycle');
    }
  }

  /** What was delivered inline, per destination that got something, in the pass's terms. */
  results(): DestinationResult[] {
    return [...this.targets.entries()]
      .filter(([, t]) => t.messages > 0)
      .map(([name, t]) => ({
        destination: name,
        status: 'done' as const,
        messages: t.messages,
        sent: t.sent,
        retrying: t.retrying,
        dead: 0,
      }));
  }
}

/** `random`, drawn once at the first call and the same after: one message, one retry time. */
function drawOnce(random: () => number = Math.random): () => number {
  let draw: number | undefined;
  return () => {
    draw ??= random();
    return draw;
  };
}
