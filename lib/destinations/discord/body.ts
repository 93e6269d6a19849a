/** Discord's rendering and its send, with the rate headers read (answer.ts). */

import { jsonRequest, readAnswer } from '../../deliver/send-context.ts';
import { lineText } from '../../render/escape.ts';
import { footer, headline } from '../../render/notice.ts';
import type { Notice, RenderOptions } from '../../render/types.ts';
import type { KindBody } from '../kind.ts';
import { readDiscordAnswer } from './answer.ts';
import { discordText } from './escape.ts';
import { type DiscordPayload, discordProblems } from './limits.ts';
import { discordMessage, renderDiscord } from './render.ts';
import type { DiscordDestination } from './types.ts';

/** A notice as one Discord embed: the headline as its title, the text escaped (it may quote an error). */
export function discordNotice(notice: Notice, opts: RenderOptions): DiscordPayload {
  const lines =
    notice.kind === 'test' ? `**${discordText(notice.title, 200)}**\n${discordText(notice.text, 3_000)}` : '';
  return discordMessage({
    title: discordText(headline(notice), 250, () => '…'),
    description: lines || discordText(notice.text, 3_500, undefined, { lines: true }),
    color: notice.kind === 'test' ? 0x1565c0 : 0xb71c1c,
    footer: { text: lineText(footer(opts), 500) },
  });
}

export const discordBody: KindBody<DiscordDestination, DiscordPayload> = {
  render: (_destination, alerts, opts) => renderDiscord(alerts, opts),
  notice: (_destination, notice, opts) => discordNotice(notice, opts),
  request: (destination, payload) => jsonRequest(destination.url, payload),
  read: (_destination, answer, now) =>
    readDiscordAnswer(readAnswer(answer, now), answer.body, answer.headers),
  problems: discordProblems,
};
