/**
 * The one way this product toggles an asset (upstream endpoint 10), shared by the HTTP route and
 * `assets toggle`: the audit record, the upstream call under a short deadline, and the mapping of
 * its failures to API errors.
 *
 * The audit record is written twice under the same key: `pending` before the upstream call, and
 * the outcome after it. If the first write fails the toggle is not sent, so no toggle ever reaches
 * the upstream without a trace; if the process dies mid-call, the trace says `pending`.
 *
 * @example
 * const asset = await toggleAsset(deps, { client: 'runbook', assetId: 10011, isDisabled: true, requestId });
 */
import type { Logger } from '../log.ts';
import type { AuditEntry, AuditStore } from '../state/audit.ts';
import type { CallOptions } from '../upstream/http.ts';
import type { Asset } from '../upstream/schemas.ts';
import { ApiError, toApiError } from './errors.ts';

/** The part of UpstreamClient this needs. */
export interface AssetToggler {
  toggleAsset(assetId: number, isDisabled: boolean, options?: CallOptions): Promise<Asset>;
}

export interface ToggleDeps {
  upstream: AssetToggler;
  audit: AuditStore;
  logger: Logger;
  /** Milliseconds since the epoch; the upstream client should share this clock. */
  now: () => number;
  /** Total time budget of the upstream call, retries included. */
  upstreamTimeoutMs: number;
}

export interface ToggleRequest {
  /** Name of the API client (or `cli:<user>`), recorded in the audit trail. */
  client: string;
  assetId: number;
  isDisabled: boolean;
  requestId: string;
  /** The tenant whose token it is sent with (`top`: the top level's), kept in its audit entry. */
  tenant?: number | 'top';
}

/** The `pending` audit record could not be written: the toggle must not be sent. */
class AuditUnavailable extends Error {
  constructor(override readonly cause: unknown) {
    super('the audit trail could not be written');
  }
}

/** Toggles the asset and returns it as the upstream reports it; throws an ApiError otherwise. */
export async function toggleAsset(deps: ToggleDeps, request: ToggleRequest): Promise<Asset> {
  const { client, assetId, isDisabled, requestId, tenant } = request;
  const log = deps.logger.child({ requestId, client, assetId, requestedDisabled: isDisabled });
  const base = {
    at: new Date(deps.now()).toISOString(),
    requestId,
    client,
    assetId,
    requestedDisabled: isDisabled,
    ...(tenant === undefined ? {} : { tenant }),
  };
  // The `pending` record is written while the request waits for its turn; the request is sent
  // only once the record is in, so no toggle reaches the upstream without a trace.
  const pending = deps.audit.record({ ...base, outcome: 'pending', status: 0 }).catch((error: unknown) => {
    throw new AuditUnavailable(error);
  });
  let asset: Asset | undefined;
  let failure: ApiError | undefined;
  try {
    asset = await deps.upstream.toggleAsset(assetId, isDisabled, {
      deadline: deps.now() + deps.upstreamTimeoutMs,
      ready: pending,
    });
  } catch (error) {
    const audit =
      error instanceof AuditUnavailable
        ? error
        : await pending.then(
            () => undefined,
            (e: unknown) => e,
          );
    if (audit instanceof AuditUnavailable) {
      log.error('audit trail unavailable; the toggle was not sent', { error: audit.cause });
      throw new ApiError(
        'internal_error',
        'the audit trail could not be written, so the toggle was not sent; retry later',
        { cause: audit.cause },
      );
    }
    failure = toApiError(error, assetId);
    const fields = { code: failure.code, status: failure.status, error: error };
    if (failure.code === 'upstream_auth_failed') {
      log.error(
        "OPERATOR ACTION NEEDED: the upstream refused this service's credentials; check EXPOSURE_API_TOKEN / EXPOSURE_API_KEY or the secret apiToken / apiKey",
        fields,
      );
    } else if (failure.code === 'internal_error') {
      log.error('asset toggle failed unexpectedly', fields);
    } else {
      log.warn('asset toggle failed upstream', fields);
    }
  }

  const entry: AuditEntry = {
    ...base,
    outcome: failure ? failure.code : 'ok',
    status: failure ? failure.status : 200,
    ...(asset ? { isDisabled: asset.is_disabled } : {}),
  };
  try {
    await deps.audit.record(entry);
  } catch (error) {
    // The toggle happened (or failed) already; the caller gets the true answer and the trace stays `pending`.
    log.error('could not record the outcome of a toggle; its audit record stays pending', {
      error,
      outcome: entry.outcome,
    });
  }
  if (failure) throw failure;
  if (asset) log.info('asset toggled', { isDisabled: asset.is_disabled });
  return asset as Asset;
}
