/**
 * The API under `start --dry-run` (section 1): a route that would act outside (an upstream action,
 * an account action, a test message, re-queueing deliveries) answers 409 `dry_run` and does
 * nothing, audits nothing; every other route works as usual.
 *
 * One list and one check. The routes that act outside are named here, by the names their
 * `answerOnce` call gives them (idempotency.ts), and that is where they are refused: after auth,
 * scope, size and body validation (section 5's order, all done before `answerOnce`), before the
 * work and before an Idempotency-Key is claimed, so a refused request leaves no trace. The
 * OpenAPI document lists the 409 on the same routes. Slack's buttons and menus, which answer in
 * words and not in status codes, say {@link DRY_RUN_SLACK} (slack.ts, slack-identity.ts).
 */
import { ApiError } from './errors.ts';

/** The routes that act outside, as `answerOnce` names them (and the OpenAPI paths, method first). */
export const ACTS_OUTSIDE: ReadonlySet<string> = new Set([
  'POST /assets/{asset_id}/toggle',
  'POST /events/actions',
  'POST /identity/actions',
  'POST /destinations/{name}/test',
  'POST /deliveries/retry',
]);

/** The API's dependencies as far as a dry run goes: set by `start --dry-run` only. */
export interface DryRunFlag {
  dryRun?: boolean;
}

/** Refuses `route` with 409 `dry_run` when this API runs in a dry run and the route acts outside. */
export function refuseInDryRun(deps: DryRunFlag, route: string): void {
  if (deps.dryRun && ACTS_OUTSIDE.has(route))
    throw new ApiError(
      'dry_run',
      'this API runs in a dry run (start --dry-run): it acts on nothing outside, so nothing was done; run npm start without --dry-run to act',
    );
}

/** What a Slack user hears for a button or menu that would act, in a dry run. */
export const DRY_RUN_SLACK =
  'This is a dry run (start --dry-run): nothing was done and nothing is recorded. Run it without --dry-run to act.';
