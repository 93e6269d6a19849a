/** ServiceNow's rendering, its create request and the reading of its answer (request.ts). */

import { readAnswer } from '../../deliver/send-context.ts';
import { searchTickets } from '../../deliver/ticket-search.ts';
import { lineText, stripControl } from '../../render/escape.ts';
import { exposureLabel } from '../../render/keys.ts';
import { TEST_MARK } from '../../render/notice.ts';
import type { Notice, RenderOptions } from '../../render/types.ts';
import type { KindBody } from '../kind.ts';
import { sendIncidentNote } from './follow-up.ts';
import { type IncidentContent, renderServiceNow } from './render.ts';
import { incidentRequest, readIncidentAnswer } from './request.ts';
import type { ServiceNowDestination } from './types.ts';

/** A notice as a ServiceNow incident: a test one (marked, low urgency) or an operator notice. */
export function incidentNotice(notice: Notice, opts: RenderOptions): IncidentContent {
  const title = notice.kind === 'test' ? `${TEST_MARK}: ${notice.title}` : `exposure-alerts: ${notice.title}`;
  return {
    short_description: lineText(title, 160, () => '…'),
    // A notice may quote a receiver's answer: its controls go, its lines stay.
    description: stripControl(notice.text, { lines: true }),
    correlation_id: exposureLabel(`${opts.destination}:${notice.kind}:${opts.now.toISOString()}`),
    correlation_display: 'exposure-alerts',
    urgency: '3',
    impact: '3',
    category: 'security',
  };
}

export const servicenowBody: KindBody<ServiceNowDestination, IncidentContent> = {
  render: (_destination, alerts, opts) => renderServiceNow(alerts, opts),
  notice: (_destination, notice, opts) => incidentNotice(notice, opts),
  request: (destination, payload) => incidentRequest(destination, payload),
  read: (_destination, answer, now) =>
    readIncidentAnswer(answer.status, answer.body) ?? readAnswer(answer, now),
  followUp: sendIncidentNote,
  labelOf: (incident) => incident.correlation_id,
  search: (destination, label, ctx) =>
    searchTickets(
      `${destination.url}/api/now/table/${destination.table}?sysparm_query=${encodeURIComponent(`correlation_id=${label}`)}&sysparm_fields=sys_id,number&sysparm_limit=1`,
      destination.authorization,
      ctx,
      (body) => (body as { result?: { sys_id?: unknown }[] }).result?.[0]?.sys_id,
    ),
  problems: (incident) =>
    !incident.short_description ||
    incident.short_description.length > 160 ||
    /[\r\n]/.test(incident.short_description)
      ? ['short_description must be one line of 1 to 160 characters']
      : [],
};
