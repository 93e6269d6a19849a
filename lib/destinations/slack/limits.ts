/**
 * Slack's message limits (docs/destinations/slack.md), checked and enforced in one place. The Slack
 * renderer builds within them; `fitSlackPayload` is the safety net that clips anything still over
 * (saying so), and `slackLimitProblems` is what `config validate` and the tests use to prove it.
 */
import { formatCount } from '../../render/escape.ts';

/** A Slack message: blocks, and the text every message has. */
export interface SlackPayload {
  /** Always present: the notification and accessibility fallback. */
  text: string;
  blocks: Record<string, unknown>[];
}

export const SLACK_LIMITS = {
  blocks: 50,
  sectionText: 3000,
  fields: 10,
  fieldText: 2000,
  headerText: 150,
  blockId: 255,
  contextElements: 10,
  text: 40_000,
  /** Slack refuses long block sets near 13,000 characters in all (`msg_blocks_too_long`). */
  totalBlockText: 12_000,
  /** An overflow menu (a section's accessory): 2 to 5 options, each's text and value. */
  overflowOptions: { min: 2, max: 5 },
  optionText: 75,
  optionValue: 150,
  actionId: 255,
} as const;

type Block = Record<string, unknown>;
type TextObject = { type?: unknown; text?: unknown };

function textOf(obj: unknown): string | undefined {
  const text = (obj as TextObject | undefined)?.text;
  return typeof text === 'string' ? text : undefined;
}

/** Every text a block shows, with the limit that applies to it. */
function blockTexts(block: Block): { where: string; text: string; max: number }[] {
  const out: { where: string; text: string; max: number }[] = [];
  if (block.type === 'header') {
    out.push({ where: 'header text', text: textOf(block.text) ?? '', max: SLACK_LIMITS.headerText });
  }
  if (block.type === 'section') {
    const text = textOf(block.text);
    if (text !== undefined) out.push({ where: 'section text', text, max: SLACK_LIMITS.sectionText });
    for (const field of (block.fields as unknown[] | undefined) ?? []) {
      out.push({ where: 'section field', text: textOf(field) ?? '', max: SLACK_LIMITS.fieldText });
    }
  }
  if (block.type === 'context') {
    for (const element of (block.elements as unknown[] | undefined) ?? []) {
      const text = textOf(element);
      if (text !== undefined) out.push({ where: 'context element', text, max: SLACK_LIMITS.sectionText });
    }
  }
  return out;
}

/** Total characters of every text in the blocks: what `msg_blocks_too_long` counts. */
export function slackBlockTextLength(blocks: Block[]): number {
  return blocks.reduce((n, b) => n + blockTexts(b).reduce((m, t) => m + t.text.length, 0), 0);
}

/** Every limit the payload breaks, as readable lines; empty when it is within all of them. */
export function slackLimitProblems(payload: SlackPayload): string[] {
  const problems: string[] = [];
  if (!payload.text) problems.push('top-level text is missing');
  if (payload.text.length > SLACK_LIMITS.text) {
    problems.push(`top-level text has ${payload.text.length} characters (limit ${SLACK_LIMITS.text})`);
  }
  if (payload.blocks.length > SLACK_LIMITS.blocks) {
    problems.push(`${payload.blocks.length} blocks (limit ${SLACK_LIMITS.blocks})`);
  }
  payload.blocks.forEach((block, i) => {
    const id = block.block_id;
    if (typeof id === 'string' && id.length > SLACK_LIMITS.blockId) {
      problems.push(`blocks[${i}].block_id has ${id.length} characters (limit ${SLACK_LIMITS.blockId})`);
    }
    if (block.type === 'header' && (block.text as TextObject | undefined)?.type !== 'plain_text') {
      problems.push(`blocks[${i}] header text is not plain_text`);
    }
    const fields = block.fields as unknown[] | undefined;
    if (fields && fields.length > SLACK_LIMITS.fields) {
      problems.push(`blocks[${i}] has ${fields.length} fields (limit ${SLACK_LIMITS.fields})`);
    }
    const elements = block.elements as unknown[] | undefined;
    if (block.type === 'context' && elements && elements.length > SLACK_LIMITS.contextElements) {
      problems.push(
        `blocks[${i}] has ${elements.length} context elements (limit ${SLACK_LIMITS.contextElements})`,
      );
    }
    problems.push(...accessoryProblems(block.accessory, `blocks[${i}].accessory`));
    for (const t of blockTexts(block)) {
      if (t.text.length > t.max)
        problems.push(`blocks[${i}] ${t.where} has ${t.text.length} characters (limit ${t.max})`);
      if (t.text.length === 0) problems.push(`blocks[${i}] ${t.where} is empty`);
    }
  });
  const total = slackBlockTextLength(payload.blocks);
  if (total > SLACK_LIMITS.totalBlockText) {
    problems.push(`blocks hold ${total} characters of text (limit about ${SLACK_LIMITS.totalBlockText})`);
  }
  return problems;
}

/** What an overflow menu beside a section breaks (an account menu: identity-menu.ts). */
function accessoryProblems(accessory: unknown, where: string): string[] {
  const menu = accessory as { type?: unknown; action_id?: unknown; options?: unknown } | undefined;
  if (menu?.type !== 'overflow') return [];
  const problems: string[] = [];
  const { min, max } = SLACK_LIMITS.overflowOptions;
  const options = Array.isArray(menu.options) ? (menu.options as { text?: unknown; value?: unknown }[]) : [];
  if (options.length < min || options.length > max)
    problems.push(`${where} has ${options.length} options (${min} to ${max})`);
  if (typeof menu.action_id !== 'string' || menu.action_id.length > SLACK_LIMITS.actionId)
    problems.push(`${where}.action_id is missing or over ${SLACK_LIMITS.actionId} characters`);
  options.forEach((option, j) => {
    const text = textOf(option.text) ?? '';
    if (text.length === 0 || text.length > SLACK_LIMITS.optionText)
      problems.push(
        `${where}.options[${j}] text has ${text.length} characters (1 to ${SLACK_LIMITS.optionText})`,
      );
    const value = typeof option.value === 'string' ? option.value : '';
    if (value.length === 0 || value.length > SLACK_LIMITS.optionValue)
      problems.push(
        `${where}.options[${j}] value has ${value.length} characters (1 to ${SLACK_LIMITS.optionValue})`,
      );
  });
  return problems;
}

/** Cuts escaped mrkdwn at `max`, never inside an entity or a `<…>` link, and says how much went. */
function clipMrkdwn(text: string, max: number): string {
  if (text.length <= max) return text;
  const note = (n: number) => `… (truncated, ${formatCount(n)} more characters)`;
  let cut = text.slice(0, Math.max(0, max - note(text.length).length));
  cut = cut.replace(/&[a-z#0-9]*$/i, '').replace(/<[^>]*$/, '');
  return `${cut}${note(text.length - cut.length)}`;
}

function clipBlock(block: Block): Block {
  const clipText = (obj: unknown, max: number) => {
    const t = textOf(obj);
    return t !== undefined && t.length > max ? { ...(obj as object), text: clipMrkdwn(t, max) } : obj;
  };
  const out: Block = { ...block };
  if (typeof out.block_id === 'string' && out.block_id.length > SLACK_LIMITS.blockId) {
    out.block_id = out.block_id.slice(0, SLACK_LIMITS.blockId);
  }
  if (block.type === 'header') out.text = clipText(block.text, SLACK_LIMITS.headerText);
  if (block.type === 'section') {
    if (block.text !== undefined) out.text = clipText(block.text, SLACK_LIMITS.sectionText);
    if (Array.isArray(block.fields)) {
      out.fields = block.fields.slice(0, SLACK_LIMITS.fields).map((f) => clipText(f, SLACK_LIMITS.fieldText));
    }
  }
  if (block.type === 'context' && Array.isArray(block.elements)) {
    out.elements = block.elements
      .slice(0, SLACK_LIMITS.contextElements)
      .map((e) => clipText(e, SLACK_LIMITS.sectionText));
  }
  return out;
}

function noteBlock(text: string): Block {
  return { type: 'context', elements: [{ type: 'mrkdwn', text }] };
}

/**
 * The payload within every limit: texts clipped, and trailing blocks dropped (replaced by one
 * note saying how many) when there are too many blocks or too much text in all.
 */
export function fitSlackPayload(payload: SlackPayload): SlackPayload {
  let blocks = payload.blocks.map(clipBlock);
  const budget = SLACK_LIMITS.totalBlockText - 100;
  let keep = Math.min(blocks.length, SLACK_LIMITS.blocks);
  while (keep > 1 && slackBlockTextLength(blocks.slice(0, keep)) > budget) keep--;
  if (keep < blocks.length) {
    const dropped = blocks.length - (keep === SLACK_LIMITS.blocks ? keep - 1 : keep);
    blocks = [
      ...blocks.slice(0, blocks.length - dropped),
      noteBlock(`… (truncated, ${formatCount(dropped)} more blocks not shown)`),
    ];
  }
  const text = payload.text ? clipMrkdwn(payload.text, SLACK_LIMITS.text) : 'exposure-alerts message';
  return { ...payload, text, blocks };
}
