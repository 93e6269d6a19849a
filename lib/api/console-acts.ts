/**
 * What the console changes, or asks before changing (docs/console.md), apart from the
 * routes that already were: how many recent alerts a silence would have held (`POST
 * /silences?dryRun=true`), re-queueing dead deliveries (`POST /deliveries/retry`) and a test
 * message to a destination (`POST /destinations/{name}/test`). Loaded with the first such request.
 *
 * - A dry run reads the alert index's last DRY_RUN_DAYS days, at most DRY_RUN_MAX entries (a few
 *   Queries), and matches each with the silence matcher itself (rules/match.ts) on what the entry
 *   kept of its item: `{"wouldHold": N, "of": M}`, M being the alerts read. Nothing is created.
 * - A retry re-queues at most MAX_REQUEUE deliveries a request (state/records/requeue.ts): the ids
 *   given, or the oldest dead of a destination; whatever is not dead is left alone and counted.
 * - A test is sent at once, as `destinations test` sends it (the same notice, its follow-on steps),
 *   once a minute per destination for every process on the table (state/test-pace.ts).
 */

import * as z from 'zod/mini';
import type { ResolvedDestination } from '../deliver/destinations.ts';
import type { HttpPost } from '../deliver/post.ts';
import type { Alert, ItemKind } from '../model.ts';
import { matches } from '../rules/match.ts';
import { matchSchema } from '../rules/match-schema.ts';
import { parseUntil } from '../rules/silences.ts';
import { AlertReader } from '../state/alert-list.ts';
import type { TableIo } from '../state/io.ts';
import { deadIds, MAX_REQUEUE, requeueDead } from '../state/records/requeue.ts';
import { takeTestTurn } from '../state/test-pace.ts';
import { describeIssues, issuesToText } from '../upstream/validate.ts';
import type { TenantName } from './alert-query.ts';
import type { Binding } from './auth.ts';
import { ApiError } from './errors.ts';
import { sees } from './tenancy.ts';

export const DRY_RUN_DAYS = 7;
export const DRY_RUN_MAX = 2_000;

/** A silence body for a dry run: `match` as for a silence; `until` and `reason` checked when given. */
export const dryRunBodySchema = z.strictObject({
  match: matchSchema,
  until: z.optional(z.string()),
  reason: z.optional(z.string()),
});

function bad(message: string): never {
  throw new ApiError('invalid_request', message);
}

/** `POST /silences?dryRun=true`: how many of the recent alerts `body.match` would have held. */
export async function dryRunSilence(
  deps: { io: TableIo; tenants(): Promise<readonly TenantName[]> },
  body: unknown,
  /** A bound client counts only its tenants' alerts (api/tenancy.ts). */
  binding?: Binding,
): Promise<{ wouldHold: number; of: number }> {
  const parsed = dryRunBodySchema.safeParse(body);
  if (!parsed.success)
    bad(`the silence is invalid: ${issuesToText(describeIssues(parsed.error.issues, body))}`);
  const { match, until } = parsed.data;
  if (until !== undefined) {
    const checked = parseUntil(until, deps.io.clock.now());
    if ('error' in checked) bad(`the silence is invalid: until: ${checked.error}`);
  }
  const [entries, tenants] = await Promise.all([
    new AlertReader(deps.io).recent(DRY_RUN_DAYS, DRY_RUN_MAX),
    deps.tenants(),
  ]);
  let wouldHold = 0;
  let of = 0;
  for (const entry of entries) {
    if (!sees(binding, entry.tenant)) continue;
    of += 1;
    const tenant =
      entry.tenant === undefined
        ? undefined
        : {
            id: entry.tenant,
            name: tenants.find((t) => t.id === entry.tenant)?.name ?? String(entry.tenant),
          };
    const alert = {
      kind: entry.kind as ItemKind,
      key: entry.key,
      source: entry.source,
      ...(tenant ? { tenant } : {}),
      item: entry.match,
    } as unknown as Alert;
    if (matches(match, alert)) wouldHold += 1;
  }
  return { wouldHold, of };
}

const retryBodySchema = z.union([
  z.strictObject({
    ids: z
      .array(z.string().check(z.minLength(1), z.maxLength(3_000)))
      .check(z.minLength(1), z.maxLength(MAX_REQUEUE)),
  }),
  z.strictObject({
    destination: z.string().check(z.minLength(1), z.maxLength(200)),
    status: z.literal('dead'),
  }),
]);
export const retryRequestSchema = retryBodySchema;

/** The body of `POST /deliveries/retry`, checked (400 naming what is wrong). */
export function retryRequest(body: unknown): z.infer<typeof retryBodySchema> {
  const parsed = retryBodySchema.safeParse(body);
  if (!parsed.success)
    bad(
      `give {"ids": [1 to ${MAX_REQUEUE} delivery ids]} or {"destination": "<name>", "status": "dead"}: ${issuesToText(describeIssues(parsed.error.issues, body))}`,
    );
  return parsed.data;
}

/** `POST /deliveries/retry`. */
export async function retryDeliveries(
  deps: { io: TableIo; tenants(): Promise<readonly TenantName[]> },
  body: unknown,
): Promise<{ requeued: number; skipped: number }> {
  const request = retryRequest(body);
  const ids =
    'ids' in request
      ? request.ids
      : await deadIds(
          deps.io,
          request.destination,
          (await deps.tenants()).map((t) => t.id),
        );
  if (ids.length === 0) return { requeued: 0, skipped: 0 };
  return requeueDead(deps.io, ids);
}

/** The config's destinations with their secrets, and what their notices need. */
export interface TestableDestinations {
  destinations: ReadonlyMap<string, ResolvedDestination>;
  /** Destinations that cannot be sent to, and why (a secret missing from the secret object). */
  unusable?: ReadonlyMap<string, string>;
  /** EXPOSURE_APP_URL: where links into the upstream's web app point. */
  appUrl: string;
  digest: { threshold: number; maxItems: number };
}

export interface DestinationTestDeps {
  io: TableIo;
  /** Loaded when first asked for (the Lambda reads its config layer then). */
  destinations(): Promise<TestableDestinations>;
  post?: HttpPost;
  timeoutMs?: number;
}

const TEST_TEXT =
  'This is a test of the "{name}" destination, sent from the exposure-alerts console. No action is needed.';

/** `POST /destinations/{name}/test`: sent at once; a second within the minute is a 429. */
export async function testDestination(
  deps: DestinationTestDeps,
  name: string,
): Promise<{ result: 'sent' | 'refused' | 'failed'; detail?: string }> {
  const known = await deps.destinations();
  const destination = known.destinations.get(name);
  const unusable = known.unusable?.get(name);
  if (unusable) return { result: 'refused', detail: `not sent: ${unusable}`.slice(0, 500) };
  if (!destination)
    throw new ApiError(
      'not_found',
      `no destination named ${JSON.stringify(name.slice(0, 100))} in the config (it has ${[...known.destinations.keys(), ...(known.unusable?.keys() ?? [])].join(', ') || 'none'})`,
    );
  const turn = await takeTestTurn(deps.io, name);
  if (!turn.ok) {
    const seconds = Math.ceil(turn.waitMs / 1000);
    throw new ApiError(
      'rate_limited',
      `${name} had a test message less than a minute ago (one a minute, since a PagerDuty test pages someone); try again in ${seconds} s`,
      { headers: { 'Retry-After': String(seconds) } },
    );
  }
  const [{ bodyOf }, { send, DEFAULT_SEND_TIMEOUT_MS }, { httpPost }] = await Promise.all([
    import('../destinations/kinds.ts'),
    import('../deliver/senders.ts'),
    import('../deliver/post.ts'),
  ]);
  const body = await bodyOf(destination);
  const payload = body.notice(
    destination,
    { kind: 'test', title: 'exposure-alerts test message', text: TEST_TEXT.replace('{name}', name) },
    { destination: name, appUrl: known.appUrl, digest: known.digest, now: new Date(deps.io.clock.now()) },
  );
  const ctx = {
    post: deps.post ?? httpPost,
    now: () => deps.io.clock.now(),
    timeoutMs: deps.timeoutMs ?? DEFAULT_SEND_TIMEOUT_MS,
    // The terminal destination of npm start prints here; nothing else writes.
    write: (text: string) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  };
  const outcome = await send(destination, payload, [], ctx);
  if (!outcome.ok)
    return {
      result: outcome.permanent ? 'refused' : 'failed',
      // Says the status and the start of the answer (deliver/send-context.ts), never the URL.
      detail: outcome.error.slice(0, 500),
    };
  const steps = (await body.afterTest?.(destination, payload, outcome, ctx)) ?? [];
  const failed = steps.find(([, step]) => !step.ok);
  const said = [
    outcome.status ? `HTTP ${outcome.status}` : '',
    ...steps.map(([what, step]) => `${what.trim()} ${step.ok ? 'ok' : 'failed'}`),
  ].filter(Boolean);
  if (failed && !failed[1].ok)
    return {
      result: failed[1].permanent ? 'refused' : 'failed',
      detail: `${said.join(', ')}: ${failed[1].error}`.slice(0, 500),
    };
  return { result: 'sent', ...(said.length ? { detail: said.join(', ') } : {}) };
}
