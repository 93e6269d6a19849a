/** What the API's middleware keeps for a request (app.ts), shared by the modules that add routes. */
export type Vars = { Variables: { requestId: string; client?: string; errorCode?: string } };
