/** What an e-mail destination resolves to: its face (index.ts) and body share it, so neither imports the other. */
export interface EmailDestination {
  name: string;
  type: 'email';
  provider: 'generic' | 'sendgrid' | 'postmark';
  url: string;
  apiKey?: string;
  from: string;
  to: string[];
  messageStream?: string;
}
