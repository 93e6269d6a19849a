/** Sentinel's records and their upload: the token first, then the array (send.ts). */

import { postRequest } from '../../deliver/send-context.ts';
import type { Notice, RenderOptions } from '../../render/types.ts';
import type { KindBody } from '../kind.ts';
import type { SentinelRecord } from './render.ts';
import { renderSentinel } from './render.ts';
import { sendSentinel } from './send.ts';
import type { SentinelDestination } from './types.ts';

/** A notice as one record, its title and text as the item. */
export function sentinelNotice(notice: Notice, opts: RenderOptions): { records: SentinelRecord[] } {
  return {
    records: [
      {
        TimeGenerated: opts.now.toISOString(),
        Key: `${notice.kind}:${opts.now.toISOString()}`,
        Kind: notice.kind === 'test' ? 'test' : 'notice',
        Severity: 'info',
        Routes: [],
        Destination: opts.destination,
        Source: 'exposure-alerts',
        Item: { title: notice.title, text: notice.text },
      },
    ],
  };
}

export const sentinelBody: KindBody<SentinelDestination, { records: SentinelRecord[] }> = {
  render: (_destination, alerts, opts) => renderSentinel(alerts, opts),
  notice: (_destination, notice, opts) => sentinelNotice(notice, opts),
  send: (destination, payload, _ids, ctx) =>
    sendSentinel(destination, payload.records, ctx, (request) => postRequest(request, ctx)),
};
