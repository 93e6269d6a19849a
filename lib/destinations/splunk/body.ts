/** Splunk's events and their send: HEC takes them written one after another, not as an array. */
import type { Notice, RenderOptions } from '../../render/types.ts';
import type { KindBody } from '../kind.ts';
import type { HecEvent } from './render.ts';
import { renderSplunk } from './render.ts';
import type { SplunkDestination } from './types.ts';

/** A notice as one event, its title and text as the event. */
export function splunkNotice(notice: Notice, opts: RenderOptions): { events: HecEvent[] } {
  return {
    events: [
      {
        time: opts.now.getTime() / 1000,
        source: 'exposure-alerts',
        sourcetype: 'exposure_alerts',
        event: {
          kind: notice.kind === 'test' ? 'test' : 'notice',
          title: notice.title,
          text: notice.text,
        },
      },
    ],
  };
}

export const splunkBody: KindBody<SplunkDestination, { events: HecEvent[] }> = {
  render: (destination, alerts, opts) =>
    renderSplunk(alerts, opts, {
      sourcetype: destination.sourcetype,
      ...(destination.index ? { index: destination.index } : {}),
    }),
  notice: (_destination, notice, opts) => splunkNotice(notice, opts),
  request: (destination, payload) => ({
    url: `${destination.url}/services/collector/event`,
    headers: { 'Content-Type': 'application/json', Authorization: destination.authorization },
    body: payload.events.map((e) => JSON.stringify(e)).join('\n'),
  }),
};
