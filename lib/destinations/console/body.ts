/**
 * The terminal's rendering and its "send": a write. A dry run's stand-in (index.ts) heads each
 * message with the destination it stands for; with `keepIn`, it also writes the message's items to
 * a file there, numbered, and names the `preview` that renders them as that destination would
 * receive them (its own kind's payload, which in a terminal would be JSON to read past).
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { isAbsolute, join, relative } from 'node:path';
import { lineText } from '../../render/escape.ts';
import { footer, headline } from '../../render/notice.ts';
import type { DeliveryAlert, Notice, RenderOptions } from '../../render/types.ts';
import type { KindBody } from '../kind.ts';
import { renderConsole } from './render.ts';
import type { ConsoleDestination, ConsoleOptions } from './types.ts';

/** A stand-in's message: what the terminal shows, and the items it holds, for `preview`. */
interface StandInMessage {
  text: string;
  items: unknown[];
}

type ConsolePayload = string | StandInMessage;

const textOf = (payload: ConsolePayload) => (typeof payload === 'string' ? payload : payload.text);

/**
 * The item as `preview` reads one: a credential whose password the policy hid gets an empty
 * `hash` back (the schema wants one), which `preview` hides again under the same policy.
 */
function previewable(alert: DeliveryAlert): unknown {
  const item = alert.item as { hash?: unknown };
  return alert.kind === 'credential' && typeof item.hash !== 'string' ? { ...item, hash: '' } : item;
}

/**
 * Writes the items to `<keepIn>/<destination>-<n>.json`, after any already there (a `poll` beside
 * the dry run writes to its folder too; `wx` never overwrites one); returns its path as a command
 * line in this folder takes it.
 */
async function keep(destination: ConsoleDestination & { keepIn: string }, items: unknown[]): Promise<string> {
  const base = destination.name.replace(/[^\w.-]/g, '_');
  await mkdir(destination.keepIn, { recursive: true });
  const numbers = (await readdir(destination.keepIn)).map((f) =>
    f.startsWith(`${base}-`) && /^\d+\.json$/.test(f.slice(base.length + 1))
      ? Number.parseInt(f.slice(base.length + 1), 10)
      : 0,
  );
  for (let n = Math.max(0, ...numbers) + 1; ; n++) {
    const file = join(destination.keepIn, `${base}-${n}.json`);
    try {
      await writeFile(file, `${JSON.stringify(items, null, 2)}\n`, { flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw error;
    }
    const near = relative(process.cwd(), file);
    return near.startsWith('..') || isAbsolute(near) ? file : near;
  }
}

export function consoleNotice(notice: Notice, opts: RenderOptions): string {
  const lines = [
    headline(notice),
    ...(notice.kind === 'test' ? [notice.title] : []),
    notice.text,
    footer(opts),
  ];
  return `${lines.map((l, i) => `${i ? '  ' : ''}${lineText(l, 2_000)}`).join('\n')}\n`;
}

export const consoleBody: KindBody<ConsoleDestination, ConsolePayload, unknown, ConsoleOptions> = {
  render(destination, alerts, opts) {
    const messages = renderConsole(alerts, { ...opts, color: opts.kindOptions?.color ?? false });
    if (!destination.standsFor || !destination.keepIn) return messages;
    return messages.map((m) => {
      const ids = new Set(m.deliveryIds);
      const items = alerts.filter((a) => ids.has(a.deliveryId)).map(previewable);
      return { ...m, payload: { text: m.payload, items } };
    });
  },
  notice: (_destination, notice, opts) => consoleNotice(notice, opts),
  async send(destination, payload, _ids, ctx) {
    if (!destination.standsFor) {
      ctx.write(textOf(payload));
      return { ok: true };
    }
    const { name, standsFor, keepIn } = destination;
    const shown =
      keepIn && typeof payload !== 'string'
        ? `; as ${name} would receive it: exposure-alerts preview ${await keep({ ...destination, keepIn }, payload.items)} --destination ${name}`
        : '';
    ctx.write(`── ${name} (${standsFor}, dry run: would send this${shown}) ──\n${textOf(payload)}`);
    return { ok: true };
  },
  show: (_destination, payload) => textOf(payload).replace(/\n$/, ''),
  terminal: true,
};
