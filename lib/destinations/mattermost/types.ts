/** What a Mattermost destination resolves to: its face (index.ts) and body share it, so neither imports the other. */
export interface MattermostDestination {
  name: string;
  type: 'mattermost';
  /** `<site>/hooks/<id>`: whoever has it can post, so it is a secret. */
  url: string;
  channel?: string;
  username?: string;
}
