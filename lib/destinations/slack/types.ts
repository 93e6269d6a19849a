/**
 * What a Slack destination resolves to, and the options its renderer reads: its face (index.ts)
 * and body share them, so neither imports the other.
 */
import type { RenderOptions } from '../../render/types.ts';

/** A Slack app's side of a destination: what every Web API call it makes needs. */
export interface SlackApp {
  /** The bot token (`xoxb-…`), a secret. */
  token: string;
  /** The channel as configured (an id or `#name`); answers give its id. */
  channel: string;
  /** The Web API's base, `https://slack.com/api` (tests point it at a stand-in). */
  apiUrl: string;
}

export interface SlackDestination {
  name: string;
  type: 'slack';
  /** Where a message is POSTed: the incoming webhook, or the app's `chat.postMessage`. */
  url: string;
  /** The Slack app form: its bot token, the channel, and the Web API's base URL. */
  app?: SlackApp;
}

/** What Slack's renderer reads of the run (its face's `renderOptions`). */
export interface SlackOptions {
  /** An event's own message carries the action buttons: the config has `actions.slack`. */
  buttons?: boolean;
}

/** The options Slack's renderers take: the shared ones, its own, and what its body adds. */
export interface SlackRenderOptions extends RenderOptions, SlackOptions {
  /** The event's flags after an action (a follow-up's edit): its buttons offer their undo. */
  flags?: { ignored?: boolean; remediated?: boolean };
  /** Posted by an incoming webhook (its buttons' answers replace it), else by the app. */
  webhook?: boolean;
}
