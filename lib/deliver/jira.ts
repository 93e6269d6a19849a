/**
 * The ticket destinations: Jira Cloud (REST v3) and ServiceNow (Table API): the create request for
 * a rendered issue or incident, and their answers read as each means them. (No duplicate from a
 * crash or a timeout: tickets.ts.)
 */
import type { JiraContent } from '../render/jira.ts';
import type { IncidentContent } from '../render/servicenow.ts';
import type { ResolvedDestination } from './destinations.ts';
import type { HttpRequest, SendOutcome } from './outcome.ts';

/** `POST /rest/api/3/issue`: the project, the issue type and the destination's labels added. */
export function jiraRequest(
  destination: Extract<ResolvedDestination, { type: 'jira' }>,
  content: JiraContent,
): HttpRequest {
  return {
    url: `${destination.url}/rest/api/3/issue`,
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json',
      Authorization: destination.authorization,
    },
    body: JSON.stringify({
      fields: {
        project: { key: destination.project },
        issuetype: { name: destination.issueType },
        summary: content.summary,
        description: content.description,
        labels: [...content.labels, ...destination.labels],
      },
    }),
  };
}

/**
 * Jira's answers, where they differ from any HTTP API's: a 201 names the issue (its key is kept);
 * a refusal keeps Jira's own `errorMessages` and `errors`, so the dead record says why.
 */
export function readJiraAnswer(status: number, body: string): SendOutcome | undefined {
  let answer: { key?: unknown; errorMessages?: unknown; errors?: unknown } = {};
  try {
    answer = JSON.parse(body) as typeof answer;
  } catch {
    // Not JSON: the status decides, as for any destination.
  }
  if (status >= 200 && status < 300)
    return typeof answer.key === 'string' ? { ok: true, status, ticket: answer.key } : { ok: true, status };
  if (status >= 400 && status < 500 && status !== 429 && status !== 408) {
    const messages = Array.isArray(answer.errorMessages) ? answer.errorMessages.map(String) : [];
    const fields =
      answer.errors && typeof answer.errors === 'object'
        ? Object.entries(answer.errors as Record<string, unknown>).map(([k, v]) => `${k}: ${String(v)}`)
        : [];
    const said = [...messages, ...fields].join('; ').replace(/\s+/g, ' ').slice(0, 400);
    return { ok: false, permanent: true, status, error: `HTTP ${status}${said ? ` ${said}` : ''}` };
  }
  return undefined;
}

/** `POST /api/now/table/<table>`: the incident, with the destination's assignment group. */
export function incidentRequest(
  destination: Extract<ResolvedDestination, { type: 'servicenow' }>,
  content: IncidentContent,
): HttpRequest {
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

/**
 * Searches a ticket system (a GET of `url`) for the ticket a label names: its key or id, undefined
 * when there is none, 'error' when the search itself failed (a create then waits: tickets.ts).
 */
export async function searchTickets(
  url: string,
  authorization: string,
  ctx: { timeoutMs: number },
  found: (body: unknown) => unknown,
): Promise<string | undefined | 'error'> {
  try {
    const res = await fetch(url, {
      headers: { Accept: 'application/json', Authorization: authorization },
      signal: AbortSignal.timeout(ctx.timeoutMs),
    });
    if (!res.ok) {
      await res.body?.cancel();
      return 'error';
    }
    const key = found(await res.json());
    return typeof key === 'string' ? key : undefined;
  } catch {
    return 'error';
  }
}
