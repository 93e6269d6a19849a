/** What a Sentinel destination resolves to: its face (index.ts) and body share it, so neither imports the other. */
export interface SentinelDestination {
  name: string;
  type: 'sentinel';
  tenantId: string;
  clientId: string;
  /** A secret, as is the token it buys: neither is ever logged. */
  clientSecret: string;
  endpoint: string;
  ruleId: string;
  stream: string;
  loginUrl: string;
}
