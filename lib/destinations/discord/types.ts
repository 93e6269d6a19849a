/** What a Discord destination resolves to: its face (index.ts) and body share it, so neither imports the other. */
export interface DiscordDestination {
  name: string;
  type: 'discord';
  /** Holds the webhook's token: a secret. */
  url: string;
}
