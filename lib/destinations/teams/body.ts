/** Teams' rendering and its send: any 2xx is accepted (Workflows answers 202 with no body). */

import { jsonRequest } from '../../deliver/send-context.ts';
import { renderNotice } from '../../render/notice.ts';
import type { TeamsPayload } from '../../render/types.ts';
import type { KindBody } from '../kind.ts';
import type { TeamsDestination } from './index.ts';
import { teamsProblems } from './limits.ts';
import { renderTeams } from './render.ts';

export const teamsBody: KindBody<TeamsDestination, TeamsPayload> = {
  render: (_destination, alerts, opts) => renderTeams(alerts, opts),
  notice: (_destination, notice, opts) => renderNotice('teams', notice, opts),
  request: (destination, payload) => jsonRequest(destination.url, payload),
  problems: teamsProblems,
};
