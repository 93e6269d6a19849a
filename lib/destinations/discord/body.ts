/** Discord's rendering and its send, with the rate headers read (answer.ts). */

import { jsonRequest, readAnswer } from '../../deliver/send-context.ts';
import { renderNotice } from '../../render/notice.ts';
import type { DiscordPayload } from '../../render/types.ts';
import type { KindBody } from '../kind.ts';
import { readDiscordAnswer } from './answer.ts';
import type { DiscordDestination } from './index.ts';
import { discordProblems, renderDiscord } from './render.ts';

export const discordBody: KindBody<DiscordDestination, DiscordPayload> = {
  render: (_destination, alerts, opts) => renderDiscord(alerts, opts),
  notice: (_destination, notice, opts) => renderNotice('discord', notice, opts),
  request: (destination, payload) => jsonRequest(destination.url, payload),
  read: (_destination, answer, now) =>
    readDiscordAnswer(readAnswer(answer, now), answer.body, answer.headers),
  problems: discordProblems,
};
