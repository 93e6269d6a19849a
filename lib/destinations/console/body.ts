/** The terminal's rendering and its "send": a write. */

import { lineText } from '../../render/escape.ts';
import { footer, headline } from '../../render/notice.ts';
import type { Notice, RenderOptions } from '../../render/types.ts';
import type { KindBody } from '../kind.ts';
import type { ConsoleDestination } from './index.ts';
import { renderConsole } from './render.ts';

export function consoleNotice(notice: Notice, opts: RenderOptions): string {
  const lines = [
    headline(notice),
    ...(notice.kind === 'test' ? [notice.title] : []),
    notice.text,
    footer(opts),
  ];
  return `${lines.map((l, i) => `${i ? '  ' : ''}${lineText(l, 2_000)}`).join('\n')}\n`;
}

export const consoleBody: KindBody<ConsoleDestination, string> = {
  render: (_destination, alerts, opts) => renderConsole(alerts, { ...opts, color: opts.color ?? false }),
  notice: (_destination, notice, opts) => consoleNotice(notice, opts),
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
