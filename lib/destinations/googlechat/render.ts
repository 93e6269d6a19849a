/**
 * What a Google Chat destination receives: a card per event, per credential group (or part of
 * one), per digest (over `digest.threshold` alerts; with `threads`, a parent and its replies), and
 * a card for a test or an operator notice, the test marked first, in the card's title. Upstream
 * text is kept inert by the invariant card.ts states: only escaped card HTML, never `text`.
 */

import { planBatches } from '../../render/group.ts';
import { webhookIdempotencyKey } from '../../render/keys.ts';
import { footer, TEST_MARK } from '../../render/notice.ts';
import type { DeliveryAlert, Notice, Rendered, RenderOptions } from '../../render/types.ts';
import {
  chatLines,
  chatMessage,
  chatText,
  fitChat,
  type GoogleChatPayload,
  muted,
  paragraph,
} from './card.ts';
import { digestMessage } from './digest.ts';
import { itemMessages } from './items.ts';

/** Each Rendered lists exactly the alerts its card (and its thread) shows or counts. */
export function renderGoogleChat(
  alerts: DeliveryAlert[],
  opts: RenderOptions,
  threads: boolean,
): Rendered<GoogleChatPayload>[] {
  return planBatches(alerts, opts.digest).flatMap((batch) =>
    batch.type === 'digest' ? [digestMessage(batch, opts, threads)] : itemMessages(batch, opts),
  );
}

/**
 * A notice as one card. A test to a destination with `threads` opens a thread of its own, so
 * `destinations test` can reply in it as a digest's items would be.
 */
export function googleChatNotice(notice: Notice, opts: RenderOptions, threads: boolean): GoogleChatPayload {
  const test = notice.kind === 'test';
  const threadKey =
    test && threads ? webhookIdempotencyKey(opts.destination, [`test ${opts.now.toISOString()}`]) : undefined;
  return fitChat(
    chatMessage(
      test ? 'test' : 'notice',
      { title: test ? TEST_MARK : 'exposure-alerts notice', subtitle: 'exposure-alerts' },
      [
        {
          widgets: [
            paragraph(`<b>${chatText(notice.title, 300)}</b><br>${chatLines(notice.text, 3_000)}`),
            paragraph(muted(chatText(footer(opts), 600))),
          ],
        },
      ],
      threadKey,
    ),
  );
}

/** The reply `destinations test` sends in its test message's thread. */
export function testReply(threadKey: string): GoogleChatPayload {
  return chatMessage(
    'test-reply',
    { title: TEST_MARK, subtitle: 'a reply in the thread' },
    [{ widgets: [paragraph('A digest with threads on sends its items as replies like this one.')] }],
    threadKey,
  );
}
