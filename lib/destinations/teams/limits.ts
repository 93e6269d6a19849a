/**
 * Teams' limits checked and enforced in one place, as slack/limits.ts does for Slack: the
 * renderers build within a byte budget (card.ts), `fitTeamsPayload` is the safety net that
 * drops what is still over (saying so), and `teamsProblems` is what `config validate` and the tests
 * use to prove a card is one Workflows takes and that no upstream text sits where Markdown renders.
 */

import type { TeamsPayload } from './card.ts';
import {
  bytesOf,
  rich,
  run,
  TEAMS_BUDGET_BYTES,
  TEAMS_LABELS,
  TEAMS_MAX_BYTES,
  teamsMessage,
} from './card.ts';

/**
 * The safety net after the renderers' own budgets: a message still over the budget loses body
 * elements from the end (the first, its header, stays), replaced by one note saying how many.
 */
export function fitTeamsPayload(payload: TeamsPayload): TeamsPayload {
  const card = payload.attachments[0].content;
  if (bytesOf(payload) <= TEAMS_BUDGET_BYTES) return payload;
  const body = [...card.body];
  let dropped = 0;
  const withNote = () => [
    ...body,
    rich([run(`… (truncated, ${dropped} more parts not shown)`, { italic: true, isSubtle: true })]),
  ];
  while (body.length > 1 && bytesOf(teamsMessage(withNote(), card.actions)) > TEAMS_BUDGET_BYTES) {
    body.pop();
    dropped++;
  }
  const fitted = teamsMessage(withNote(), card.actions);
  // A header alone over the budget cannot happen (its runs are clipped); drop the actions if so.
  return bytesOf(fitted) <= TEAMS_BUDGET_BYTES ? fitted : teamsMessage(withNote(), []);
}

/**
 * What a Teams payload breaks, as readable lines: the wrapper and card shape Workflows expects,
 * the size, and the text rule (TextBlocks hold only our labels; no FactSet, no mentions).
 * `config validate` and the tests use it.
 */
export function teamsProblems(payload: TeamsPayload): string[] {
  const problems: string[] = [];
  const bytes = bytesOf(payload);
  if (bytes >= TEAMS_MAX_BYTES) problems.push(`body has ${bytes} bytes (limit ${TEAMS_MAX_BYTES})`);
  if (payload.type !== 'message') problems.push('type is not "message"');
  const attachment = payload.attachments?.[0];
  if (!attachment || payload.attachments.length !== 1) problems.push('not exactly one attachment');
  if (attachment?.contentType !== 'application/vnd.microsoft.card.adaptive')
    problems.push('attachment contentType is not an Adaptive Card');
  const card = attachment?.content;
  if (card?.type !== 'AdaptiveCard') problems.push('content type is not AdaptiveCard');
  if (card?.version !== '1.4') problems.push('card version is not 1.4');
  const labels = new Set<string>(TEAMS_LABELS);
  const walk = (value: unknown, path: string) => {
    if (Array.isArray(value)) {
      for (const [i, v] of value.entries()) walk(v, `${path}[${i}]`);
    } else if (value && typeof value === 'object') {
      const v = value as Record<string, unknown>;
      if (v.type === 'TextBlock' && !labels.has(String(v.text)))
        problems.push(`${path} is a TextBlock with text that is not one of our labels`);
      if (v.type === 'FactSet' || v.type === 'Fact') problems.push(`${path} is a ${v.type}`);
      if (v.type === 'RichTextBlock') {
        const inlines = v.inlines as unknown[] | undefined;
        if (!inlines?.length) problems.push(`${path} has no inlines`);
        else if (inlines.some((i) => (i as { type?: unknown }).type !== 'TextRun'))
          problems.push(`${path} holds an inline that is not a TextRun`);
      }
      for (const [k, child] of Object.entries(v)) {
        if (k === 'msteams') problems.push(`${path}.msteams is set (mentions)`);
        walk(child, `${path}.${k}`);
      }
    }
  };
  walk(card?.body, 'body');
  walk(card?.actions, 'actions');
  return problems;
}
