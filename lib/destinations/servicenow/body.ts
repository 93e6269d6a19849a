/** ServiceNow's rendering, its create request and the reading of its answer (deliver/jira.ts). */
import { incidentRequest, readIncidentAnswer } from '../../deliver/jira.ts';
import { readAnswer } from '../../deliver/send-context.ts';
import { renderNotice } from '../../render/notice.ts';
import { type IncidentContent, renderServiceNow } from '../../render/servicenow.ts';
import type { KindBody } from '../kind.ts';
import type { ServiceNowDestination } from './index.ts';

export const servicenowBody: KindBody<ServiceNowDestination, IncidentContent> = {
  render: (_destination, alerts, opts) => renderServiceNow(alerts, opts),
  notice: (_destination, notice, opts) => renderNotice('servicenow', notice, opts),
  request: (destination, payload) => incidentRequest(destination, payload),
  read: (_destination, answer, now) =>
    readIncidentAnswer(answer.status, answer.body) ?? readAnswer(answer, now),
  problems: (incident) =>
    !incident.short_description ||
    incident.short_description.length > 160 ||
    /[\r\n]/.test(incident.short_description)
      ? ['short_description must be one line of 1 to 160 characters']
      : [],
};
