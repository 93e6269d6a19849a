/**
 * What a Slack destination resolves to (and the options its renderer reads): its face (index.ts)
 * and body share them, so neither imports the other.
 */

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
