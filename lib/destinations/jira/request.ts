/**
 * Jira Cloud (REST v3): the create request for a rendered issue, and its answers read as Jira means
 * them. (No duplicate from a crash or a timeout: deliver/tickets.ts.)
 */
import type { HttpRequest, SendOutcome } from '../../deliver/outcome.ts';
import type { JiraContent } from './render.ts';
import type { JiraDestination } from './types.ts';

/** `POST /rest/api/3/issue`: the project, the issue type and the destination's labels added. */
export function jiraRequest(destination: JiraDestination, content: JiraContent): HttpRequest {
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
