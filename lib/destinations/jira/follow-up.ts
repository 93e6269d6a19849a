/**
 * Jira's follow-up: a comment on the item's issue, naming the item on an issue that lists several;
 * then, on ignore or remediate, the destination's `doneTransition` (best effort), only when the
 * issue is the item's own: one listing several items stays open for the others.
 */
import type { SendOutcome } from '../../deliver/outcome.ts';
import { RESOLVING_ACTIONS } from '../../model.ts';
import { noteLines } from '../../render/follow-up.ts';
import type { FollowUpSend } from '../kind.ts';
import { type JiraContent, jiraComment } from './render.ts';
import type { JiraDestination } from './types.ts';

export async function sendJiraFollowUp(
  destination: JiraDestination,
  f: FollowUpSend<JiraContent>,
): Promise<SendOutcome | 'budget'> {
  const { record, action, ctx, log } = f;
  if (!record.ticket) return { ok: false, permanent: true, error: 'no issue to comment on' };
  const own = await f.ownTicket();
  const issue = `${destination.url}/rest/api/3/issue/${encodeURIComponent(record.ticket)}`;
  const json = {
    'Content-Type': 'application/json',
    Accept: 'application/json',
    Authorization: destination.authorization,
  };
  const commented = await f.request({
    url: `${issue}/comment`,
    headers: json,
    body: JSON.stringify({ body: jiraComment(noteLines(own, record, action)) }),
  });
  if (commented === 'budget' || !commented.ok) return commented;
  if (!destination.doneTransition || !RESOLVING_ACTIONS.has(action.type) || !own) return commented;
  // The transition by its name, as the workflow has it now; a workflow without it is said, not retried.
  try {
    const res = await fetch(`${issue}/transitions`, {
      headers: json,
      signal: AbortSignal.timeout(ctx.timeoutMs),
    });
    const { transitions = [] } = (await res.json()) as { transitions?: { id?: string; name?: string }[] };
    const wanted = destination.doneTransition.toLowerCase();
    const to = transitions.find((t) => t.name?.toLowerCase() === wanted);
    if (!to?.id) {
      log.warn('the issue has no such transition now; left as it is', {
        issue: record.ticket,
        transition: destination.doneTransition,
      });
      return commented;
    }
    const moved = await fetch(`${issue}/transitions`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ transition: { id: to.id } }),
      signal: AbortSignal.timeout(ctx.timeoutMs),
    });
    await moved.body?.cancel();
    if (!moved.ok)
      log.warn('the issue refused its transition; left as it is', {
        issue: record.ticket,
        status: moved.status,
      });
  } catch (error) {
    log.warn('could not move the issue through its transition; left as it is', {
      issue: record.ticket,
      error,
    });
  }
  return commented;
}
