/** What the API's middleware keeps for a request (app.ts), shared by the modules that add routes. */
export type Vars = {
  Variables: {
    requestId: string;
    client?: string;
    /** The client's scopes, once authenticated (a route whose scope depends on its body reads them). */
    scopes?: ReadonlySet<string>;
    /** The tenants whose data the client is bound to (auth.ts); absent: unbound, it sees all. */
    binding?: import('./auth.ts').Binding;
    errorCode?: string;
  };
};
