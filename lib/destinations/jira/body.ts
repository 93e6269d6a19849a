/** Jira's rendering, its create request and the reading of its answer (request.ts). */

import { readAnswer } from '../../deliver/send-context.ts';
import { searchTickets } from '../../deliver/ticket-search.ts';
import { renderNotice } from '../../render/notice.ts';
import type { KindBody } from '../kind.ts';
import { sendJiraFollowUp } from './follow-up.ts';
import type { JiraDestination } from './index.ts';
import { JIRA_SUMMARY_MAX, type JiraContent, renderJira } from './render.ts';
import { jiraRequest, readJiraAnswer } from './request.ts';

export const jiraBody: KindBody<JiraDestination, JiraContent> = {
  render: (_destination, alerts, opts) => renderJira(alerts, opts),
  notice: (_destination, notice, opts) => renderNotice('jira', notice, opts),
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
