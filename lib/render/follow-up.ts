/**
 * What a follow-up says, in words every kind uses (each kind's body sends its own: a Slack app
 * edits and replies, PagerDuty resolves, a webhook gets an `action` body, a ticket a note). Who
 * acted and why are a person's text: each kind escapes them like upstream text, so a reason can no
 * more ping, link or spoof than an event can.
 */
import type { FollowUpAction, ItemKind } from '../model.ts';
import { stripControl } from './escape.ts';
import { formatTime } from './format.ts';

/** What each known action did, as a line starts; another type is shown as it is. */
const DONE: Record<string, string> = {
  ignore: 'Ignored',
  remediate: 'Marked remediated',
  unignore: 'No longer ignored',
  unremediate: 'No longer remediated',
  // Actions on the account a leaked login names (docs/identity.md).
  revokeSessions: 'Sessions revoked',
  requirePasswordChange: 'Password change required',
  confirmCompromised: 'Confirmed compromised',
  disable: 'Account disabled',
  enable: 'Account enabled',
};

/** `Ignored by cli:alice at 2026-11-25 12:00 UTC`, as plain text (escape it for the medium). */
export function actionWords(action: FollowUpAction): string {
  return `${DONE[action.type] ?? `Action "${action.type}"`} by ${action.by} at ${formatTime(action.at)}`;
}

/**
 * A ticket's note on an action, line by line, controls out: on a ticket that lists several items
 * (`own` false), first which one it is about.
 */
export function noteLines(
  own: boolean,
  record: { kind: ItemKind; key: string },
  action: FollowUpAction,
): string[] {
  return [
    ...(own ? [] : [`About the ${record.kind === 'event' ? 'event' : 'leaked credential'} ${record.key}:`]),
    actionWords(action),
    ...(action.reason ? [`Reason: ${action.reason}`] : []),
  ].map((line) => stripControl(line));
}
