/**
 * What Google Chat would refuse in a message, and where upstream text could come alive: the check
 * behind `config validate`'s render check (card.ts states the invariant it holds the renderers to).
 */
import {
  bytesOf,
  CHAT_MAX_BYTES,
  CHAT_MAX_WIDGETS,
  type ChatButton,
  type GoogleChatPayload,
  OUR_TAGS,
  PARAGRAPH_MAX,
} from './card.ts';

const ENTITY = /&(amp|lt|gt|quot|#39);/g;
const MESSAGE_KEYS = new Set(['cardsV2', 'thread']);

/** Problems of one card text (HTML): markup that is not ours, a bare `&`, a `://`, its length. */
function htmlProblems(text: unknown, where: string): string[] {
  if (typeof text !== 'string' || !text) return [`${where}: no text`];
  const problems: string[] = [];
  if (text.length > PARAGRAPH_MAX)
    problems.push(`${where}: ${text.length} characters, over ${PARAGRAPH_MAX}`);
  const bare = text.replace(OUR_TAGS, '');
  if (/[<>]/.test(bare))
    problems.push(`${where}: markup that is not ours (a mention, a link or a tag could be live)`);
  if (bare.replace(ENTITY, '').includes('&')) problems.push(`${where}: an unescaped &`);
  if (bare.replace(ENTITY, '').includes('://')) problems.push(`${where}: a URL that could be auto-linked`);
  return problems;
}

/** Problems of one of our own strings (a header, a label): plain words, no markup at all. */
function ownProblems(text: unknown, where: string, required = true): string[] {
  if (text === undefined && !required) return [];
  if (typeof text !== 'string' || !text) return [`${where}: no text`];
  return /[<>&]/.test(text) ? [`${where}: holds <, > or &`] : [];
}

function buttonProblems(b: ChatButton | undefined, where: string): string[] {
  const url = b?.onClick?.openLink?.url;
  return [
    ...ownProblems(b?.text, `${where}.text`),
    ...(typeof url === 'string' && /^https?:\/\//.test(url) ? [] : [`${where}: not an http(s) openLink`]),
  ];
}

/**
 * What Google Chat would refuse (over 32,000 bytes, more than 100 widgets, a malformed card) and
 * what breaks the invariant that keeps upstream text inert, as readable lines.
 */
export function googleChatProblems(payload: GoogleChatPayload): string[] {
  const problems: string[] = [];
  const bytes = bytesOf(payload);
  if (bytes > CHAT_MAX_BYTES) problems.push(`message has ${bytes} bytes (limit ${CHAT_MAX_BYTES})`);
  for (const key of Object.keys(payload))
    if (!MESSAGE_KEYS.has(key))
      problems.push(`the message has "${key}": only cardsV2 and thread are sent (text formats and mentions)`);
  if (
    payload.thread !== undefined &&
    (typeof payload.thread?.threadKey !== 'string' || !payload.thread.threadKey)
  )
    problems.push('thread without a threadKey');
  const cards = payload.cardsV2;
  if (!Array.isArray(cards) || cards.length !== 1) return [...problems, 'not exactly one card in cardsV2'];
  const { cardId, card } = cards[0];
  if (typeof cardId !== 'string' || !cardId) problems.push('the card has no cardId');
  problems.push(...ownProblems(card?.header?.title, 'header.title'));
  problems.push(...ownProblems(card?.header?.subtitle, 'header.subtitle', false));
  if (!Array.isArray(card?.sections) || !card.sections.length)
    return [...problems, 'the card has no section'];
  let widgets = 0;
  for (const [s, section] of card.sections.entries()) {
    problems.push(...ownProblems(section.header, `sections[${s}].header`, false));
    if (!Array.isArray(section.widgets) || !section.widgets.length)
      problems.push(`sections[${s}] has no widget`);
    for (const [w, widget] of (section.widgets ?? []).entries()) {
      widgets++;
      const where = `sections[${s}].widgets[${w}]`;
      const kinds = Object.keys(widget);
      if (kinds.length !== 1) problems.push(`${where}: not exactly one widget`);
      if ('textParagraph' in widget) {
        if (Object.keys(widget.textParagraph).length !== 1)
          problems.push(`${where}: textParagraph has more than text`);
        problems.push(...htmlProblems(widget.textParagraph.text, `${where}.textParagraph`));
      } else if ('decoratedText' in widget) {
        const { text, wrapText, button, ...rest } = widget.decoratedText;
        if (Object.keys(rest).length)
          problems.push(`${where}: decoratedText has ${Object.keys(rest).join(', ')}`);
        if (wrapText !== true) problems.push(`${where}: decoratedText without wrapText`);
        problems.push(...htmlProblems(text, `${where}.decoratedText`));
        if (button) problems.push(...buttonProblems(button, `${where}.decoratedText.button`));
      } else if ('buttonList' in widget) {
        const list = widget.buttonList.buttons;
        if (!Array.isArray(list) || !list.length) problems.push(`${where}: an empty buttonList`);
        for (const [b, one] of (list ?? []).entries())
          problems.push(...buttonProblems(one, `${where}.buttons[${b}]`));
      } else problems.push(`${where}: a widget we do not send (${kinds.join(', ')})`);
    }
  }
  if (widgets > CHAT_MAX_WIDGETS)
    problems.push(`the card has ${widgets} widgets (limit ${CHAT_MAX_WIDGETS})`);
  return problems;
}
