/**
 * ServiceNow's follow-up: a work note on the item's incident (a `PATCH` of `work_notes`), naming
 * the item on an incident that lists several; its answer read as the kind's answers are.
 */
import type { SendOutcome } from '../../deliver/outcome.ts';
import { readAnswer } from '../../deliver/send-context.ts';
import { noteLines } from '../../render/follow-up.ts';
import type { FollowUpSend } from '../kind.ts';
import type { IncidentContent } from './render.ts';
import { readIncidentAnswer } from './request.ts';
import type { ServiceNowDestination } from './types.ts';

export async function sendIncidentNote(
  destination: ServiceNowDestination,
  f: FollowUpSend<IncidentContent>,
): Promise<SendOutcome | 'budget'> {
  const { record, action, ctx } = f;
  if (!record.ticket) return { ok: false, permanent: true, error: 'no incident to note on' };
  const own = await f.ownTicket();
  if (!(await f.turn())) return 'budget';
  const note = noteLines(own, record, action).join('\n');
  try {
    const res = await fetch(
      `${destination.url}/api/now/table/${destination.table}/${encodeURIComponent(record.ticket)}`,
      {
        method: 'PATCH',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json',
          Authorization: destination.authorization,
        },
        body: JSON.stringify({ work_notes: note }),
        signal: AbortSignal.timeout(ctx.timeoutMs),
      },
    );
    const text = await res.text();
    f.sent();
    const answer = { status: res.status, body: text, headers: res.headers };
    return readIncidentAnswer(answer.status, answer.body) ?? readAnswer(answer, ctx.now());
  } catch (error) {
    f.sent();
    return { ok: false, permanent: false, error: `network error: ${(error as Error)?.message ?? 'unknown'}` };
  }
}
