/** What a Google Chat destination resolves to: its face (index.ts) and body share it, so neither imports the other. */
export interface GoogleChatDestination {
  name: string;
  type: 'googlechat';
  /** `…/v1/spaces/<space>/messages?key=…&token=…`: a secret. */
  url: string;
  threads: boolean;
}
