/**
 * The console's routes on the API app (docs/console.md): the page at `GET /console`, its
 * files at `GET /console/<name>`, and `GET /whoami`, which tells a token's holder its name and
 * grants (scopes, and the tenants they hold on; any scope will do), so the page offers only what the token may do, and whether this is a
 * dry run (`start --dry-run`), so the page says so.
 *
 * The page needs no auth: it holds no data, and reads everything through the bearer API. Its bytes
 * (page-packed.ts, built by pack.ts) and the code that answers with them (page.ts) load with the
 * first request for the page: the API's start carries only these few lines. The page's links and
 * API calls are relative to `/console` (so the API may sit under a path prefix); `/console/` is no
 * route.
 *
 * @example
 * addConsoleRoutes(app, need);
 * await app.request('/console'); // 200 text/html, with the console's CSP
 */
import type { Hono, MiddlewareHandler } from 'hono';
import { SCOPES, type Scope } from '../api/auth.ts';
import type { Vars } from '../api/context.ts';
import { grantOf } from '../api/tenancy.ts';

export function addConsoleRoutes(
  app: Hono<Vars>,
  need: (...scopes: Scope[]) => MiddlewareHandler<Vars>,
  api: { dryRun?: boolean } = {},
): void {
  app.get('/whoami', need(...SCOPES), (c) => {
    const scopes = c.get('scopes');
    return c.json({
      name: c.get('client') as string,
      // A client is one grant: its scopes, on its tenants when it is bound to some (tenancy.ts).
      grants: [
        grantOf(
          SCOPES.filter((s) => scopes?.has(s)),
          c.get('binding'),
        ),
      ],
      // The page says so in a banner (api/dry-run.ts: what acts outside answers 409 dry_run).
      ...(api.dryRun ? { dryRun: true } : {}),
    });
  });
  app.get('/console', async (c) => (await import('./page.ts')).pageFile(c.req.raw, 'index.html'));
  app.get('/console/:file', async (c) =>
    (await import('./page.ts')).pageFile(c.req.raw, c.req.param('file')),
  );
}
