/**
 * Microsoft Sentinel, as a destination (docs/destinations/sentinel.md): the Logs Ingestion API takes the
 * records as a JSON array with an Entra bearer token bought with the app registration's client
 * credentials (lib/entra-token.ts, shared with the identity provider: cached until a minute
 * before it expires). The client secret and the token are never put in an error, a record or a log.
 */
import type { HttpRequest, SendOutcome } from '../../deliver/outcome.ts';
import type { HttpPost } from '../../deliver/post.ts';
import { entraToken, forgetEntraToken } from '../../entra-token.ts';
import type { SentinelRecord } from './render.ts';
import type { SentinelDestination } from './types.ts';

/** What a send gives (deliver/send-context.ts SendContext fits): the POST, the clock, the timeout, the signal. */
interface SendContext {
  post: HttpPost;
  now: () => number;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** The Logs Ingestion API's audience. */
const SCOPE = 'https://monitor.azure.com//.default';

/** The bearer token for `destination` (lib/entra-token.ts); a failure is the send's outcome. */
export async function sentinelToken(
  destination: SentinelDestination,
  ctx: SendContext,
): Promise<{ token: string } | { failure: Extract<SendOutcome, { ok: false }> }> {
  const got = await entraToken(destination, SCOPE, ctx);
  if ('token' in got) return got;
  const { status, error, permanent } = got.failure;
  return { failure: { ok: false, permanent, ...(status === undefined ? {} : { status }), error } };
}

/**
 * The upload: the token first (cached; a refused one is the destination's refusal), then the
 * records as a JSON array. `request` sends it and reads the answer (send-context.ts `postRequest`).
 */
export async function sendSentinel(
  destination: SentinelDestination,
  records: SentinelRecord[],
  ctx: SendContext,
  request: (req: HttpRequest) => Promise<SendOutcome>,
): Promise<SendOutcome> {
  const got = await sentinelToken(destination, ctx);
  if ('failure' in got) return got.failure;
  const outcome = await request({
    url: `${destination.endpoint}/dataCollectionRules/${encodeURIComponent(destination.ruleId)}/streams/${encodeURIComponent(destination.stream)}?api-version=2023-01-01`,
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${got.token}` },
    body: JSON.stringify(records),
  });
  // A token the ingestion endpoint refused is bought again next time.
  if (!outcome.ok && outcome.status === 401) forgetEntraToken(destination, SCOPE);
  return outcome;
}
