/**
 * What an API client may do (docs/api.md): one scope per kind of request. On its own,
 * with no imports, so the console's page (compiled for the browser) shares the list with auth.ts.
 */
export const SCOPES = [
  'assets:write',
  'silences:write',
  'events:act',
  'lookup',
  'read',
  'destinations:write',
  'identity:act',
  'identity:disable',
] as const;
export type Scope = (typeof SCOPES)[number];
