/**
 * ServiceNow (Table API): the create request for a rendered incident, and its answers read as
 * ServiceNow means them. (No duplicate from a crash or a timeout: deliver/tickets.ts.)
 */
import type { HttpRequest, SendOutcome } from '../../deliver/outcome.ts';
import type { IncidentContent } from './render.ts';
import type { ServiceNowDestination } from './types.ts';

/** `POST /api/now/table/<table>`: the incident, with the destination's assignment group. */
export function incidentRequest(destination: ServiceNowDestination, content: IncidentContent): HttpRequest {
  return {
    url: `${destination.url}/api/now/table/${destination.table}`,
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json',
      Authorization: destination.authorization,
    },
    body: JSON.stringify({
      ...content,
      ...(destination.assignmentGroup ? { assignment_group: destination.assignmentGroup } : {}),
    }),
  };
}

/** ServiceNow's answers: a 201 names the incident (its sys_id is kept); a refusal keeps its message. */
export function readIncidentAnswer(status: number, body: string): SendOutcome | undefined {
  let answer: { result?: { sys_id?: unknown }; error?: { message?: unknown; detail?: unknown } } = {};
  try {
    answer = JSON.parse(body) as typeof answer;
  } catch {
    // Not JSON: the status decides.
  }
  if (status >= 200 && status < 300) {
    const id = answer.result?.sys_id;
    return typeof id === 'string' ? { ok: true, status, ticket: id } : { ok: true, status };
  }
  if (status >= 400 && status < 500 && status !== 429 && status !== 408) {
    const said = [answer.error?.message, answer.error?.detail]
      .filter((v) => typeof v === 'string')
      .join(': ');
    return {
      ok: false,
      permanent: true,
      status,
      error: `HTTP ${status}${said ? ` ${said.slice(0, 400)}` : ''}`,
    };
  }
  return undefined;
}
