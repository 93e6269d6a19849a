/** Jira's rendering, its create request and the reading of its answer (request.ts). */

import { readAnswer } from '../../deliver/send-context.ts';
import { searchTickets } from '../../deliver/ticket-search.ts';
import { lineText } from '../../render/escape.ts';
import { exposureLabel } from '../../render/keys.ts';
import { TEST_MARK } from '../../render/notice.ts';
import type { Notice, RenderOptions } from '../../render/types.ts';
import type { KindBody } from '../kind.ts';
import { sendJiraFollowUp } from './follow-up.ts';
import { JIRA_SUMMARY_MAX, type JiraContent, jiraComment, renderJira } from './render.ts';
import { jiraRequest, readJiraAnswer } from './request.ts';
import type { JiraDestination } from './types.ts';

/** A notice as a Jira issue: a test ticket (marked) or an operator notice, with its own label. */
export function jiraNotice(notice: Notice, opts: RenderOptions): JiraContent {
  const title = notice.kind === 'test' ? `${TEST_MARK}: ${notice.title}` : `exposure-alerts: ${notice.title}`;
  return {
    summary: lineText(title, JIRA_SUMMARY_MAX, () => '…'),
    description: jiraComment(notice.text.split('\n').filter(Boolean)),
    labels: [exposureLabel(`${opts.destination}:${notice.kind}:${opts.now.toISOString()}`)],
  };
}

export const jiraBody: KindBody<JiraDestination, JiraContent> = {
  render: (_destination, alerts, opts) => renderJira(alerts, opts),
  notice: (_destination, notice, opts) => jiraNotice(notice, opts),
  request: (destination, payload) => jiraRequest(destination, payload),
  read: (_destination, answer, now) => readJiraAnswer(answer.status, answer.body) ?? readAnswer(answer, now),
  followUp: sendJiraFollowUp,
  labelOf: (issue) => issue.labels[0],
  search: (destination, label, ctx) =>
    searchTickets(
      `${destination.url}/rest/api/3/search/jql?jql=${encodeURIComponent(`labels = "${label}"`)}&fields=key&maxResults=1`,
      destination.authorization,
      ctx,
      (body) => (body as { issues?: { key?: unknown }[] }).issues?.[0]?.key,
    ),
  problems(issue) {
    const problems: string[] = [];
    if (!issue.summary || issue.summary.length > JIRA_SUMMARY_MAX || /[\r\n]/.test(issue.summary))
      problems.push('summary must be one line of 1 to 255 characters');
    if (issue.labels.some((l) => /\s/.test(l))) problems.push('a label has a space');
    if (/"text":""/.test(JSON.stringify(issue.description))) problems.push('an empty text node');
    return problems;
  },
};
