/**
 * `events ignore|remediate|unignore|unremediate <uid>... [--reason TEXT]`: act on events upstream
 * through the one action module every door uses (actions/events.ts), as `cli:<user>`, then send
 * the follow-ups it queued in a delivery pass right away (the Slack message edited, its thread
 * replied to, PagerDuty resolved), rather than leaving them to the next scheduled one.
 */
import { randomUUID } from 'node:crypto';
import { UsageError } from '../../errors.ts';
import type { EventActionType } from '../../state/actions.ts';
import { type Command, cliClientName } from '../command.ts';
import { terminalSafe } from '../terminal.ts';
import { describeDelivery, runtimeFor } from './poll.ts';

/** How long the follow-ups' delivery pass may start sends. */
const FOLLOW_UP_SECONDS = 30;

const DONE: Record<EventActionType, string> = {
  ignore: 'ignored',
  remediate: 'marked remediated',
  unignore: 'no longer ignored',
  unremediate: 'no longer marked remediated',
};

function eventsCommand(type: EventActionType): Command {
  return {
    path: ['events', type],
    example: `exposure-alerts events ${type} forum_post/darkforum/thread/12/post/3 --reason "test account"`,
    optionHelp: {
      reason: 'why, kept in the audit trail and shown in the follow-ups',
    },
    uses: { table: true, upstream: true },
    beside: 'refuse',
    stopsSafely:
      'each action taken is recorded; the follow-ups not yet sent go out on the next delivery pass',
    usage: `events ${type} <uid>... [--reason TEXT]`,
    summary: `${type} events upstream, once, and follow up where they were alerted`,
    options: { reason: { type: 'string' } },
    positionals: [1, Number.POSITIVE_INFINITY],
    async run(ctx) {
      const [{ actionProblem, actOnEvents }, { runDeliveryPass }] = await Promise.all([
        import('../../actions/events.ts'),
        import('../../deliver/pass.ts'),
      ]);
      const reason = typeof ctx.values.reason === 'string' ? ctx.values.reason : undefined;
      const uids = ctx.positionals;
      const problem = actionProblem({ type, uids, reason });
      if (problem) throw new UsageError(problem);
      const runtime = await runtimeFor(ctx);
      const outcome = await actOnEvents(await runtime.act(), {
        type,
        uids,
        by: cliClientName(),
        id: randomUUID(),
        ...(reason ? { reason } : {}),
      });
      // The upstream did not answer: nothing changed (exit 3 when it refused our credentials).
      if (outcome.unanswered) throw outcome.unanswered;
      for (const r of outcome.results)
        ctx.io.stdout(`${terminalSafe(`${r.uid}  ${r.ok ? DONE[type] : `refused: ${r.error}`}`)}\n`);
      const ok = outcome.results.filter((r) => r.ok).length;
      ctx.io.stdout(
        `action ${outcome.id}: ${ok} of ${outcome.results.length} events ${DONE[type]}; ${outcome.followUps} follow-up${outcome.followUps === 1 ? '' : 's'} to the destinations that were sent them\n`,
      );
      if (outcome.followUps > 0) {
        const pass = await runDeliveryPass(runtime.deliver, {
          deadline: Date.now() + FOLLOW_UP_SECONDS * 1000,
          stop: ctx.signal,
        });
        for (const line of describeDelivery(pass)) ctx.io.stdout(`${line}\n`);
      }
      return ok === outcome.results.length ? 0 : 1;
    },
  };
}

export const eventsIgnoreCommand = eventsCommand('ignore');
export const eventsRemediateCommand = eventsCommand('remediate');
export const eventsUnignoreCommand = eventsCommand('unignore');
export const eventsUnremediateCommand = eventsCommand('unremediate');
