/**
 * The work of the account-action routes (identity-routes.ts says what they check, in which order,
 * and where the work is done), loaded with their first request: most APIs never see one, and
 * without `identity` none can succeed.
 */
import { randomUUID } from 'node:crypto';
import type { Context } from 'hono';
import type { SlackWork } from '../actions/slack-work-shape.ts';
import type { AccountDeps, AccountRequest } from '../identity/act.ts';
import { ADMIN_ACTIONS } from '../identity/words.ts';
import type { Catalog } from '../state/catalog.ts';
import { actionIdOf } from './actions.ts';
import type { Binding, Scope } from './auth.ts';
import { readJsonText } from './body.ts';
import type { Vars } from './context.ts';
import { ApiError } from './errors.ts';
import { answerOnce, type IdempotencyDeps } from './idempotency.ts';
import { MAX_BODY_BYTES } from './schemas.ts';
import { sees, tenantToActAs } from './tenancy.ts';

export interface IdentityApiDeps {
  /**
   * The action module's dependencies, made when first asked for: with `providers` where this
   * process has their secrets (it acts at once), without on AWS (it records and hands off).
   */
  accounts(): Promise<AccountDeps>;
  /** The config's tenants and identity providers (the config itself, or the pollers' catalog). */
  known(): Promise<Pick<Catalog, 'tenants' | 'identity'> | undefined>;
}

export type IdentityRouteDeps = IdempotencyDeps & {
  identity?: IdentityApiDeps;
  /** Where an action recorded here goes to be done (a worker's queue). */
  handOff?: (work: SlackWork) => Promise<void>;
};

/** At most this many never-leaked logins are named in a refusal; the rest are counted. */
const NAMED = 20;

function setUp(deps: IdentityRouteDeps): IdentityApiDeps {
  if (!deps.identity)
    throw new ApiError(
      'invalid_request',
      'this deployment has no identity providers (the config has no identity): no account can be acted on',
    );
  return deps.identity;
}

/**
 * The tenant the body names, checked against the config: a tenant it does not know, or a scope
 * without identity providers, is a 400. Nothing is known before the pollers' first catalog; the
 * logins' check then refuses whatever was never looked up.
 */
async function tenantOf(identity: IdentityApiDeps, wanted: number | string | undefined) {
  const known = await identity.known();
  if (!known) {
    if (typeof wanted === 'string')
      throw new ApiError(
        'invalid_request',
        'tenant: the tenants are not known here yet (no poller has run since the deploy): give the tenant’s id',
      );
    return wanted;
  }
  let tenant: number | undefined;
  if (wanted !== undefined) {
    const { lookupTenant } = await import('../actions/lookup.ts');
    try {
      tenant = lookupTenant(known.tenants ?? [], String(wanted))?.id;
    } catch (error) {
      throw new ApiError('invalid_request', `tenant: ${(error as Error).message}`);
    }
  }
  const scope = tenant ?? 'top';
  if (!(known.identity ?? []).some((p) => p.scope === scope))
    throw new ApiError(
      'invalid_request',
      tenant === undefined
        ? 'the config has no identity providers at the top level: name the tenant whose logins these are (tenant), or configure identity'
        : `tenant: tenant ${tenant} has no identity providers of its own in the config (a tenant never inherits the top level's)`,
    );
  return tenant;
}

/**
 * A bound client's tenant for an account action (`tenant` in the body, as `?tenant=` elsewhere:
 * tenancy.ts), which must have identity providers of its own.
 */
async function boundTenant(
  identity: IdentityApiDeps,
  binding: Binding,
  wanted: number | string | undefined,
): Promise<number | undefined> {
  const known = (await identity.known())?.tenants ?? [];
  const choice = tenantToActAs(binding, known, wanted === undefined ? undefined : String(wanted));
  const tenant = 'tenant' in choice ? choice.tenant : undefined;
  return tenantOf(identity, tenant);
}

/** `POST /identity/actions`, its client authenticated; `forbid` refuses it for lack of a scope (403, audited). */
export async function postAccountAction(
  c: Context<Vars>,
  deps: IdentityRouteDeps,
  forbid: (c: Context<Vars>, scope: Scope) => Promise<never>,
): Promise<Response> {
  const text = await readJsonText(c.req.raw, MAX_BODY_BYTES);
  const shapes = await import('./identity-actions.ts');
  const json = shapes.accountActionJson(text);
  // The scope the action needs, before the rest of the body is looked at.
  const asked = shapes.requestedAction(json);
  if (asked) {
    const scope: Scope = ADMIN_ACTIONS.has(asked) ? 'identity:disable' : 'identity:act';
    if (!c.get('scopes')?.has(scope)) await forbid(c, scope);
  }
  const asSent = shapes.accountActionBody(json);
  const identity = setUp(deps);
  const binding = c.get('binding');
  // A bound client acts as one of its tenants only (another is a 404, as one that does not exist).
  const tenant = binding
    ? await boundTenant(identity, binding, asSent.tenant)
    : await tenantOf(identity, asSent.tenant);
  const [accounts, act] = await Promise.all([identity.accounts(), import('../identity/act.ts')]);
  const handOff = deps.handOff;
  const never = await act.neverLeaked(accounts, {
    logins: asSent.logins,
    ...(tenant === undefined ? {} : { tenant }),
  });
  // A bound client's login without a stored verdict in its tenant is `not_found`, on its own:
  // no provider is asked for it, and the others go on.
  const notFound = binding ? never : [];
  const body = binding ? { ...asSent, logins: asSent.logins.filter((l) => !never.includes(l)) } : asSent;
  if (binding && body.logins.length === 0)
    return c.json({ results: notFound.map((login) => ({ login, ok: false, error: 'not_found' })) });
  if (!binding && never.length)
    throw new ApiError(
      'invalid_request',
      `logins: never leaked ${tenant === undefined ? 'at the top level' : `in tenant ${tenant}`} (no stored verdict names ${never.length === 1 ? 'it' : 'them'}): ${never
        .slice(0, NAMED)
        .join(', ')}${never.length > NAMED ? ` and ${never.length - NAMED} more` : ''}; nothing was done`,
    );
  return answerOnce(c, deps, 'POST /identity/actions', body, async (key) => {
    // Here, past every check of the request and a dry run's refusal (which needs neither).
    if (!accounts.providers && !handOff)
      throw new ApiError(
        'internal_error',
        'this service can neither act on accounts (it has no identity providers’ secrets) nor hand the action to a worker',
      );
    const request: AccountRequest & { id: string } = {
      action: body.action,
      logins: body.logins,
      ...(tenant === undefined ? {} : { tenant }),
      ...(body.reason ? { reason: body.reason } : {}),
      by: c.get('client') as string,
      id: actionIdOf(key ?? randomUUID()),
    };
    if (accounts.providers) {
      const outcome = await act.actOnAccounts(accounts, request);
      // A provider that has not answered yet (or another call still at it): a later pass
      // finishes it, so it is handed off, as on AWS, and GET /identity/actions/{id} follows it.
      if (outcome.open) return { status: 202, body: { id: outcome.id } };
      const results = [
        ...outcome.results.map(shapes.apiResult),
        ...notFound.map((login) => ({ login, ok: false, error: 'not_found' })),
      ];
      return { status: 200, body: { id: outcome.id, results } };
    }
    // Recorded first: a hand-off lost on the way is finished by a worker's delivery pass.
    await act.recordAccountAction(accounts, request);
    await (handOff as NonNullable<typeof handOff>)({ kind: 'identity-action', id: request.id });
    return { status: 202, body: { id: request.id } };
  });
}

/** `GET /identity/actions/{id}`, its client authenticated. */
export async function getAccountAction(
  c: Context<Vars, '/identity/actions/:id'>,
  deps: IdentityRouteDeps,
): Promise<Response> {
  const id = c.req.param('id');
  const shapes = await import('./identity-actions.ts');
  if (!shapes.accountActionIdSchema.safeParse(id).success)
    throw new ApiError(
      'invalid_request',
      `the action id ${JSON.stringify(id.slice(0, 100))} must be 1 to 700 visible ASCII characters`,
    );
  const identity = setUp(deps);
  const [accounts, act] = await Promise.all([identity.accounts(), import('../identity/act.ts')]);
  const record = await accounts.actions.get(id);
  // Another tenant's action is answered as one that does not exist.
  if (!record || !sees(c.get('binding'), record.scope === 'top' ? undefined : record.scope))
    throw new ApiError('not_found', `no identity action ${JSON.stringify(id)}`);
  const outcome = act.outcomeOf(record);
  return c.json({
    id: record.id,
    action: record.type,
    open: outcome.open,
    at: record.at,
    results: outcome.results.map(shapes.apiResult),
  });
}
