/**
 * The account actions' menus on a Slack app's messages (docs/identity.md): beside each login
 * with an identity verdict, an overflow menu (`exposure:identity`) of the account actions, when the
 * config has `actions.slack` (SlackRenderOptions `buttons`, types.ts) and the message is the app's own.
 *
 * An option's value is `<action>|<item key>`: the credential's delivery key, whose stored verdict
 * (`idv#<key>`, lib/identity/store.ts) names the tenant, the provider and the login; api/slack.ts
 * reads it back. The login itself is never in a value: it is in the section's text, escaped as
 * upstream text. Slack's limits hold: 2 to 5 options of at most 75 characters and a value of at
 * most 150 (an item key too long for that leaves its login without a menu, saying nothing). Each
 * menu is a section of its own, so a message with menus is split by its blocks (50) and its size
 * (Slack refuses a message's blocks near 13,000 characters of JSON) as well as by its lines.
 *
 * Not on an incoming webhook's message: Slack sends its clicks only to the app that made the
 * webhook, and the follow-up of an account action edits the message or replies in its thread,
 * which only the app can. Not for a `no_account` verdict either: there is no account to act on.
 */
import { ACCOUNT_ACTIONS, ACTION_WORDS, type AccountAction } from '../../identity/words.ts';
import type { CredentialDelivery } from '../../render/group.ts';
import { verdictOf } from '../../render/identity.ts';
import { type Block, packSections, SECTION_BUDGET, section } from './blocks.ts';
import { IDENTITY_ACTION_ID } from './buttons.ts';
import { SLACK_LIMITS } from './limits.ts';
import type { SlackRenderOptions } from './types.ts';

export { IDENTITY_ACTION_ID };

/**
 * What the blocks of one message may hold at most, as JSON: Slack refuses a message's blocks
 * (`msg_blocks_too_long`) near 13,000 characters, and a menu is mostly structure, not text.
 */
export const MESSAGE_JSON_BUDGET = 12_000;

/** `Revoke sessions`: the action as a menu shows it. */
export const optionLabel = (action: AccountAction): string => {
  const words = ACTION_WORDS[action];
  return `${words.charAt(0).toUpperCase()}${words.slice(1)}`;
};

/** An option's value: the action and the credential's item key, never the login. */
export const menuValue = (action: AccountAction, itemKey: string): string => `${action}|${itemKey}`;

/** The action and item key of an option's value; undefined for anything this module did not write. */
export function parseMenuValue(value: unknown): { action: AccountAction; itemKey: string } | undefined {
  if (typeof value !== 'string' || value.length > SLACK_LIMITS.optionValue) return undefined;
  const bar = value.indexOf('|');
  const action = value.slice(0, bar) as AccountAction;
  const itemKey = value.slice(bar + 1);
  if (bar < 1 || !ACCOUNT_ACTIONS.includes(action) || itemKey === '') return undefined;
  return { action, itemKey };
}

/** Whether messages rendered with these options carry account menus. */
export const menusOn = (opts: Pick<SlackRenderOptions, 'buttons' | 'webhook'>): boolean =>
  opts.buttons === true && opts.webhook !== true;

/**
 * The overflow menu for a login, or undefined: no verdict, `no_account`, menus off (see menusOn),
 * or an item key too long for a value.
 */
export function identityMenu(
  alert: CredentialDelivery,
  opts: Pick<SlackRenderOptions, 'buttons' | 'webhook'>,
): Block | undefined {
  if (!menusOn(opts)) return undefined;
  const verdict = verdictOf(alert);
  if (!verdict || verdict.verdict === 'no_account') return undefined;
  const options = ACCOUNT_ACTIONS.map((action) => ({
    text: { type: 'plain_text', text: optionLabel(action), emoji: false },
    value: menuValue(action, alert.key),
  }));
  if (options.some((o) => o.value.length > SLACK_LIMITS.optionValue)) return undefined;
  return { type: 'overflow', action_id: IDENTITY_ACTION_ID, options };
}

/** A line of a message, with the menu beside it when it has one. */
export interface Listed {
  line: string;
  menu?: Block;
}

/** What the entries of one message may take: blocks, characters of lines, JSON characters. */
export interface Room {
  blocks: number;
  chars: number;
  json: number;
}

const menuSection = (line: string, menu: Block): Block => ({ ...section(line), accessory: menu });

/**
 * The blocks of a message's entries: each entry with a menu in a section of its own (the menu is
 * its accessory), the lines between them packed as packSections packs them.
 */
export function menuBlocks(entries: readonly Listed[]): Block[] {
  const blocks: Block[] = [];
  let run: string[] = [];
  for (const entry of entries) {
    if (!entry.menu) {
      run.push(entry.line);
      continue;
    }
    blocks.push(...packSections(run), menuSection(entry.line, entry.menu));
    run = [];
  }
  blocks.push(...packSections(run));
  return blocks;
}

/** The JSON characters of blocks as Slack receives them (what its size limit counts). */
export const jsonLength = (blocks: readonly Block[]): number => JSON.stringify(blocks).length;

/**
 * Entries in messages that each fit `room` (at least one entry each), in order: sized as
 * menuBlocks lays them out, measured as it goes (a digest of thousands stays linear).
 */
export function menuParts<E extends Listed>(entries: readonly E[], room: Room): E[][] {
  const parts: E[][] = [];
  let part: E[] = [];
  // What `part` takes so far; `run` is the length of the section being packed (0: none open).
  let used = { blocks: 0, chars: 0, json: 2, run: 0 };
  const fresh = () => ({ blocks: 0, chars: 0, json: 2, run: 0 });
  const grow = (u: typeof used, entry: E) => {
    const chars = u.chars + entry.line.length + 1;
    if (entry.menu)
      return {
        blocks: u.blocks + 1,
        chars,
        json: u.json + jsonLength([menuSection(entry.line, entry.menu)]) - 1,
        run: 0,
      };
    // Joined to the open section with a newline (`\n` in JSON), as packSections would.
    if (u.run > 0 && u.run + 1 + entry.line.length <= SECTION_BUDGET)
      return {
        blocks: u.blocks,
        chars,
        json: u.json + JSON.stringify(entry.line).length,
        run: u.run + 1 + entry.line.length,
      };
    return {
      blocks: u.blocks + 1,
      chars,
      json: u.json + jsonLength([section(entry.line)]) - 1,
      run: entry.line.length,
    };
  };
  for (const entry of entries) {
    let next = grow(used, entry);
    if (part.length && (next.blocks > room.blocks || next.chars > room.chars || next.json > room.json)) {
      parts.push(part);
      part = [];
      next = grow(fresh(), entry);
    }
    part.push(entry);
    used = next;
  }
  if (part.length) parts.push(part);
  return parts;
}
