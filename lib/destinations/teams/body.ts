/** Teams' rendering and its send: any 2xx is accepted (Workflows answers 202 with no body). */

import { jsonRequest } from '../../deliver/send-context.ts';
import { footer, headline } from '../../render/notice.ts';
import type { Notice, RenderOptions } from '../../render/types.ts';
import type { KindBody } from '../kind.ts';
import type { TeamsPayload } from './card.ts';
import { rich, run, teamsMessage, upstreamText } from './card.ts';
import { fitTeamsPayload, teamsProblems } from './limits.ts';
import { renderTeams } from './render.ts';
import type { TeamsDestination } from './types.ts';

export function teamsNotice(notice: Notice, opts: RenderOptions): TeamsPayload {
  const body = [
    rich([
      run(headline(notice), {
        weight: 'Bolder',
        size: 'Large',
        color: notice.kind === 'test' ? 'Accent' : 'Attention',
      }),
    ]),
    ...(notice.kind === 'test' ? [rich(upstreamText(notice.title, 600, { weight: 'Bolder' }))] : []),
    rich(upstreamText(notice.text, 8_000)),
    rich(upstreamText(footer(opts), 600, { isSubtle: true, size: 'Small' })),
  ];
  return fitTeamsPayload(teamsMessage(body, []));
}

export const teamsBody: KindBody<TeamsDestination, TeamsPayload> = {
  render: (_destination, alerts, opts) => renderTeams(alerts, opts),
  notice: (_destination, notice, opts) => teamsNotice(notice, opts),
  request: (destination, payload) => jsonRequest(destination.url, payload),
  problems: teamsProblems,
};
