/**
 * What a request from Slack leaves for after its answer (docs/actions.md): finishing a
 * click's action (the upstream call and the follow-ups), and answering a lookup at the request's
 * `response_url`. Described as data, so the same work runs in the process that answered (serve,
 * `npm start`) or goes by queue to a worker (on AWS, where a function is frozen once it has
 * answered: functions/worker.ts runs it).
 */

import type { AccountDeps } from '../identity/act.ts';
import { ACTION_WORDS } from '../identity/words.ts';
import { slackText } from '../render/escape.ts';
import { lookupText } from '../render/lookup.ts';
import { flagOf } from '../state/actions.ts';
import {
  type ActDeps,
  ActionInProgressError,
  type ActOutcome,
  type ActRequest,
  actOnEvents,
} from './events.ts';
import type { LookupAnswer, LookupQuery } from './lookup.ts';
import { type AnswerDeps, answerAt } from './slack-answer.ts';
import type { SlackWork } from './slack-work-shape.ts';

export { isSlackWork, type SlackWork } from './slack-work-shape.ts';

export interface SlackWorkDeps extends AnswerDeps {
  act?: ActDeps;
  /** Acting on accounts (lib/identity/act.ts), where the config has `identity` and its secrets. */
  identityAct?: AccountDeps;
  /** The same, made when first needed (the API's own in serve and `npm start`: api/deps.ts). */
  identityAccounts?: () => Promise<AccountDeps>;
  lookup?: (query: LookupQuery) => Promise<LookupAnswer>;
}

const ALREADY: Record<ActRequest['type'], string> = {
  ignore: 'ignored',
  remediate: 'marked remediated',
  unignore: 'not ignored',
  unremediate: 'not marked remediated',
};

/**
 * Does the work; a failure of its own is answered at `response_url` when there is one. A click
 * whose action another call took (Slack's retry, a replay) is answered by that call alone, and a
 * webhook's message is replaced only by the click that changed the event.
 */
export async function runSlackWork(deps: SlackWorkDeps, work: SlackWork): Promise<void> {
  const ephemeral = (text: string) => ({ response_type: 'ephemeral', replace_original: false, text });
  if (work.kind === 'slack-action') {
    if (!deps.act) throw new Error('acting on events is not set up here');
    let outcome: ActOutcome;
    try {
      outcome = await actOnEvents(deps.act, work.request);
    } catch (error) {
      // A replay of a click another call is still working on: that call answers.
      if (!(error instanceof ActionInProgressError)) throw error;
      deps.logger.info('a repeated Slack click waits on the first; it answers', { action: error.id });
      return;
    }
    // The same click again (Slack's retry, a replay): the first call answered at response_url.
    if (outcome.replayed) return;
    const [result] = outcome.results;
    const changed = result?.ok === true && outcome.changed.includes(result.uid);
    if (changed && work.replace) {
      const { type, by, id } = work.request;
      const [flag, value] = flagOf(type);
      const action = { id, type, by, at: new Date().toISOString() };
      const { replacedMessage } = await import('../destinations/slack/follow-up.ts');
      await answerAt(deps, work.responseUrl, {
        replace_original: true,
        ...replacedMessage(work.replace, result.uid, action, { ...work.replace.flags, [flag]: value }),
      });
    }
    // Done already (a second click, or someone else first): said to the clicker, no follow-up.
    if (result?.ok && !changed)
      await answerAt(
        deps,
        work.responseUrl,
        ephemeral(`That event was ${ALREADY[work.request.type]} already: nothing changed.`),
      );
    if (outcome.unanswered || !result?.ok)
      await answerAt(
        deps,
        work.responseUrl,
        ephemeral(
          `Could not ${work.request.type} that event: ${slackText(result?.error ?? outcome.unanswered?.code ?? 'the upstream did not answer', 300)}. Nothing changed; try again.`,
        ),
      );
    return;
  }
  if (work.kind === 'identity-action') {
    const accounts = deps.identityAct ?? (await deps.identityAccounts?.());
    if (!accounts?.providers)
      throw new Error('acting on accounts is not set up here (no identity in the config)');
    const { finishAccountAction } = await import('../identity/act.ts');
    const outcome = await finishAccountAction(accounts, work.id);
    if (!outcome || !work.responseUrl) return;
    const lines = outcome.results.map(
      (r) => `• ${slackText(r.login, 120)}: ${r.ok ? 'done' : slackText(r.error ?? 'not done', 300)}`,
    );
    await answerAt(
      deps,
      work.responseUrl,
      ephemeral(
        `${outcome.open ? 'Under way' : 'Done'}: ${ACTION_WORDS[outcome.action]}\n${lines.join('\n')}`,
      ),
    );
    return;
  }
  if (!deps.lookup) throw new Error('lookups are not set up here');
  let text: string;
  try {
    text = lookupText(await deps.lookup(work.query));
  } catch (error) {
    text = `The lookup failed: ${slackText(error instanceof Error ? error.message : String(error), 300)}`;
  }
  await answerAt(deps, work.responseUrl, { response_type: 'ephemeral', text });
}

/**
 * A hand-off that does the work in this process, after the answer (serve, `npm start`): what a
 * failure leaves undone, a delivery pass finishes (an action), or the user asks again (a lookup).
 */
export function inProcessHandOff(deps: SlackWorkDeps): (work: SlackWork) => Promise<void> {
  return async (work) => {
    void runSlackWork(deps, work).catch((error: unknown) =>
      deps.logger.error('Slack work failed after its answer', { kind: work.kind, error }),
    );
  };
}
