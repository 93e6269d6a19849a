/**
 * Acting on leaked logins' accounts through the API (docs/identity.md): `POST
 * /identity/actions` and `GET /identity/actions/{id}`, two doors of lib/identity/act.ts.
 *
 * Scopes. `disable` and `enable` need `identity:disable`, the other actions `identity:act`; a bare
 * digest has neither (auth.ts). A client with neither is refused (403, audited) before its body
 * is read; one with only the other, as soon as the body says which action it asks for.
 *
 * Checks before any work. The body (400 naming the field), the tenant (one the config knows, with
 * identity providers of its own), and every login: one that no stored verdict of that tenant
 * names (a login we never looked up because it leaked) is refused, named, before anything is
 * recorded or any provider is asked.
 *
 * Where the work is done. A process with the providers' secrets (serve, npm start) acts at once
 * and answers 200 with each login's result; 202 with the id when a provider has not answered yet
 * (a later delivery pass finishes it, within act.ts's rules). The API on AWS has none of those
 * secrets: it records the action and hands its id to a worker by the queue Slack's work takes,
 * answering 202 with the id. `GET /identity/actions/{id}` (scope `read`) then says how it went. With an Idempotency-Key, the
 * action's id is made from the client, the key and the request (idempotency.ts), so a replay or
 * 20 calls at once are one action, which the action module takes once per id.
 *
 * The routes' work (identity-requests.ts) and the identity code (the action module, the
 * verdicts' store) load with the first request here: the API's start carries only this wiring.
 */
import type { Context, Hono, MiddlewareHandler } from 'hono';
import { lazily } from '../lazy.ts';
import type { Scope } from './auth.ts';
import type { Vars } from './context.ts';
import type { IdentityRouteDeps } from './identity-requests.ts';

export type { IdentityApiDeps, IdentityRouteDeps } from './identity-requests.ts';

export interface ScopeGuard {
  /** Auth, then any one of `scopes` (403, audited). */
  need(...scopes: Scope[]): MiddlewareHandler<Vars>;
  /** Refuses the request for lack of `scope` (403, audited). */
  forbid(c: Context<Vars>, scope: Scope): Promise<never>;
}

/** The routes' work (identity-requests.ts), loaded with their first request. */
const identityRequests = lazily(
  'the account-action routes (api/identity-requests.ts)',
  () => import('./identity-requests.ts'),
);

export function addIdentityRoutes(app: Hono<Vars>, deps: IdentityRouteDeps, guard: ScopeGuard): void {
  app.post('/identity/actions', guard.need('identity:act', 'identity:disable'), async (c) =>
    (await identityRequests()).postAccountAction(c, deps, guard.forbid),
  );
  app.get('/identity/actions/:id', guard.need('read'), async (c) =>
    (await identityRequests()).getAccountAction(c, deps),
  );
}
