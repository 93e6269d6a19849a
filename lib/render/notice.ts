/**
 * Messages that are not about alerts: `destinations test` (kind `test`) and operator notices such
 * as "this destination refuses for good" (kind `ops`), each kind rendering its own (its body's
 * `notice`) with what is here. A test is marked as one in every rendering, first thing
 * (`TEST_MARK`, or the headline), so nobody opens an incident over it. Notice text may quote a
 * receiver's error, so it is escaped like upstream text.
 */
import { webhookTimestamp } from './format.ts';
import type { Notice, RenderOptions } from './types.ts';

export const TEST_MARK = '[TEST] exposure-alerts test message — no action needed';

/** The first line of every rendering: the test mark, or the notice's title. */
export function headline(notice: Notice): string {
  return notice.kind === 'test' ? TEST_MARK : `exposure-alerts: ${notice.title}`;
}

/** The last line: where it was sent and when. */
export function footer(opts: RenderOptions): string {
  return `destination ${opts.destination} · ${webhookTimestamp(opts.now)}`;
}
