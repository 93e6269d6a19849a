/** What a Teams destination resolves to: its face (index.ts) and body share it, so neither imports the other. */
export interface TeamsDestination {
  name: string;
  type: 'teams';
  url: string;
}
