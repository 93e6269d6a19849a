/** Sentinel's records and their upload: the token first, then the array (send.ts). */

import { postRequest } from '../../deliver/send-context.ts';
import { renderNotice } from '../../render/notice.ts';
import type { SentinelRecord } from '../../render/types.ts';
import type { KindBody } from '../kind.ts';
import type { SentinelDestination } from './index.ts';
import { renderSentinel } from './render.ts';
import { sendSentinel } from './send.ts';

export const sentinelBody: KindBody<SentinelDestination, { records: SentinelRecord[] }> = {
  render: (_destination, alerts, opts) => renderSentinel(alerts, opts),
  notice: (_destination, notice, opts) => renderNotice('sentinel', notice, opts),
  send: (destination, payload, _ids, ctx) =>
    sendSentinel(destination, payload.records, ctx, (request) => postRequest(request, ctx)),
};
