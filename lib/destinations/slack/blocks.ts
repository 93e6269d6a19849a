/**
 * The Block Kit pieces every Slack message here is built from: a header, a section, a context, and
 * lines packed into as few sections as fit. Upstream text reaches them escaped already (escape.ts).
 */
import { slackPlain } from '../../render/escape.ts';

export type Block = Record<string, unknown>;

/** Room for lines in one section: under the 3,000 limit, leaving space for a closing note. */
export const SECTION_BUDGET = 2_800;

export const header = (text: string): Block => ({
  type: 'header',
  text: { type: 'plain_text', text: slackPlain(text, 150), emoji: true },
});
export const section = (text: string): Block => ({ type: 'section', text: { type: 'mrkdwn', text } });
export const context = (text: string): Block => ({ type: 'context', elements: [{ type: 'mrkdwn', text }] });

/** Lines packed into as few sections as fit, each under the section limit. */
export function packSections(lines: string[]): Block[] {
  const blocks: Block[] = [];
  let current = '';
  for (const line of lines) {
    if (current && current.length + 1 + line.length > SECTION_BUDGET) {
      blocks.push(section(current));
      current = '';
    }
    current = current ? `${current}\n${line}` : line;
  }
  if (current) blocks.push(section(current));
  return blocks;
}
