/** Splunk's events and their send: HEC takes them written one after another, not as an array. */
import { renderNotice } from '../../render/notice.ts';
import type { HecEvent } from '../../render/types.ts';
import type { KindBody } from '../kind.ts';
import type { SplunkDestination } from './index.ts';
import { renderSplunk } from './render.ts';

export const splunkBody: KindBody<SplunkDestination, { events: HecEvent[] }> = {
  render: (destination, alerts, opts) =>
    renderSplunk(alerts, opts, {
      sourcetype: destination.sourcetype,
      ...(destination.index ? { index: destination.index } : {}),
    }),
  notice: (_destination, notice, opts) => renderNotice('splunk', notice, opts),
  request: (destination, payload) => ({
    url: `${destination.url}/services/collector/event`,
    headers: { 'Content-Type': 'application/json', Authorization: destination.authorization },
    body: payload.events.map((e) => JSON.stringify(e)).join('\n'),
  }),
};
