/** The terminal's rendering and its "send": a write. */

import { renderNotice } from '../../render/notice.ts';
import type { KindBody } from '../kind.ts';
import type { ConsoleDestination } from './index.ts';
import { renderConsole } from './render.ts';

export const consoleBody: KindBody<ConsoleDestination, string> = {
  render: (_destination, alerts, opts) => renderConsole(alerts, { ...opts, color: opts.color ?? false }),
  notice: (_destination, notice, opts) => renderNotice('console', notice, opts),
  async send(destination, payload, _ids, ctx) {
    ctx.write(
      destination.standsFor
        ? `── ${destination.name} (${destination.standsFor}, dry run: not sent) ──\n${payload}`
        : payload,
    );
    return { ok: true };
  },
  show: (_destination, payload) => payload.replace(/\n$/, ''),
  terminal: true,
};
