/**
 * The routes of docs/actions.md on the API app: `GET /lookup` (scope `lookup`),
 * `POST /events/actions` (scope `events:act`), and, with `actions.slack` configured, Slack's own
 * `POST /slack/interactions` and `POST /slack/commands`, whose signature is their auth (slack.ts).
 * Each route's own code (the Slack app's, a lookup's, an action's) loads with its first request:
 * the API's start carries only this wiring.
 */
import type { Hono, MiddlewareHandler } from 'hono';
import type { ActDeps } from '../actions/events.ts';
import type { LookupAnswer, LookupQuery } from '../actions/lookup.ts';
import { lazily } from '../lazy.ts';
import type { TableIo } from '../state/io.ts';
import { UpstreamError } from '../upstream/errors.ts';
import type { Scope } from './auth.ts';
import { readJsonText } from './body.ts';
import type { Vars } from './context.ts';
import { ApiError, upstreamFailure } from './errors.ts';
import { answerOnce, type IdempotencyDeps } from './idempotency.ts';
import type { TenantDomains } from './lookup.ts';
import { MAX_BODY_BYTES } from './schemas.ts';
import type { SlackDeps } from './slack.ts';

/** The Slack app's code, loaded with its first request (only with actions.slack are there any). */
const slackModule = lazily("the Slack app's routes (api/slack.ts)", () => import('./slack.ts'));

/** What these routes need of the API's dependencies (app.ts ApiDeps fits). */
export type ActRouteDeps = Omit<SlackDeps, 'slack' | 'handOff'> &
  IdempotencyDeps & {
    act?: ActDeps;
    lookup?: (query: LookupQuery) => Promise<LookupAnswer>;
    /** The table the alert index is in: which tenant a bound client's uids belong to. */
    console?: { io: TableIo };
    /** The tenants' and the top level's credential domains: what a bound client may look up. */
    credentialDomains?: () => Promise<{ tenants: readonly TenantDomains[]; top: readonly string[] }>;
    slack?: SlackDeps['slack'];
    handOff?: SlackDeps['handOff'];
  };

export function addActRoutes(
  app: Hono<Vars>,
  deps: ActRouteDeps,
  need: (scope: Scope) => MiddlewareHandler<Vars>,
): void {
  app.get('/lookup', need('lookup'), async (c) => {
    const { boundLookup, parseLookupQuery } = await import('./lookup.ts');
    const asked = parseLookupQuery(c.req.queries());
    if (!deps.lookup) throw new ApiError('internal_error', 'lookups are not set up in this service');
    const binding = c.get('binding');
    const scope = binding ? await deps.credentialDomains?.() : undefined;
    // A bound client's lookup, kept within its tenants' domains; what is outside reaches no upstream.
    const { query, notFound } = binding
      ? boundLookup(binding, scope?.tenants ?? [], scope?.top ?? [], asked)
      : { query: asked, notFound: [] };
    try {
      const answer = query ? await deps.lookup(query) : { identities: [], more: 0 };
      return c.json(notFound.length ? { ...answer, notFound } : answer);
    } catch (error) {
      if (error instanceof UpstreamError) throw upstreamFailure(error, 'retry later');
      throw error;
    }
  });

  // Slack's own requests: its signature is their auth (slack.ts); there only with actions.slack.
  const slack = deps.slack;
  if (slack) {
    const slackDeps: SlackDeps = {
      ...deps,
      slack,
      // On AWS a worker does it (the queue); serve and npm start give their own (cli/commands/api.ts).
      handOff:
        deps.handOff ??
        (async () => {
          throw new ApiError('internal_error', 'nothing here can do the work Slack asked for');
        }),
    };
    app.post('/slack/interactions', async (c) => {
      const { readSlackBody, slackInteraction, verifiedForm } = await slackModule();
      const form = verifiedForm(slackDeps, await readSlackBody(c.req.raw), c.req.raw.headers, 'interactions');
      await slackInteraction(slackDeps, form);
      return c.body(null, 200);
    });
    app.post('/slack/commands', async (c) => {
      const { readSlackBody, slackCommand, verifiedForm } = await slackModule();
      const form = verifiedForm(slackDeps, await readSlackBody(c.req.raw), c.req.raw.headers, 'commands');
      return c.json(await slackCommand(slackDeps, form));
    });
  }

  app.post('/events/actions', need('events:act'), async (c) => {
    const { actionIdOf, boundEventActionsRequest, eventActionsRequest, parseEventActionBody, screenUids } =
      await import('./actions.ts');
    const body = parseEventActionBody(await readJsonText(c.req.raw, MAX_BODY_BYTES));
    const act = deps.act;
    if (!act) throw new ApiError('internal_error', 'acting on events is not set up in this service');
    const binding = c.get('binding');
    return answerOnce(c, deps, 'POST /events/actions', body, async (id) => {
      const request = { client: c.get('client') as string, body, ...(id ? { id: actionIdOf(id) } : {}) };
      return {
        status: 200,
        body: binding
          ? await boundEventActionsRequest(act, await screenUids(indexOf(deps), binding, body.uids), request)
          : await eventActionsRequest(act, request),
      };
    });
  });
}

function indexOf(deps: ActRouteDeps): TableIo {
  if (!deps.console) throw new ApiError('internal_error', 'the alert index is not set up in this service');
  return deps.console.io;
}
