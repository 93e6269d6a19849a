/**
 * Microsoft Sentinel, as a destination (interface.md section 4): the Logs Ingestion API takes the
 * records as a JSON array with an Entra bearer token bought with the app registration's client
 * credentials. The token is cached per destination until a minute before it expires, so a pass
 * asks for it once, not once a request. The client secret and the token are secrets: neither is
 * ever put in an error, a record or a log line.
 */
import { createHash } from 'node:crypto';
import type { HttpRequest, SendOutcome } from '../../deliver/outcome.ts';
import type { HttpPost } from '../../deliver/post.ts';
import type { SentinelDestination } from './index.ts';
import type { SentinelRecord } from './render.ts';

/** What a send gives (senders.ts SendContext fits): the POST, the clock, the timeout, the signal. */
interface SendContext {
  post: HttpPost;
  now: () => number;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** A token is given up this long before it expires (a request in flight must not carry a dead one). */
export const TOKEN_MARGIN_MS = 60_000;

const tokens = new Map<string, { token: string; until: number }>();

/** Per app and secret: a rotated secret buys its own token (only a digest of it is held). */
function cacheKey(d: SentinelDestination): string {
  const secret = createHash('sha256').update(d.clientSecret).digest('hex').slice(0, 16);
  return `${d.loginUrl} ${d.tenantId} ${d.clientId} ${secret}`;
}

/** The bearer token for `destination`, from the cache or Entra; a failure says why, without secrets. */
export async function sentinelToken(
  destination: SentinelDestination,
  ctx: SendContext,
): Promise<{ token: string } | { failure: Extract<SendOutcome, { ok: false }> }> {
  const now = ctx.now();
  const cached = tokens.get(cacheKey(destination));
  if (cached && cached.until > now) return { token: cached.token };
  try {
    const res = await ctx.post(
      `${destination.loginUrl}/${encodeURIComponent(destination.tenantId)}/oauth2/v2.0/token`,
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          client_id: destination.clientId,
          client_secret: destination.clientSecret,
          scope: 'https://monitor.azure.com//.default',
          grant_type: 'client_credentials',
        }).toString(),
        signal: AbortSignal.timeout(ctx.timeoutMs),
      },
    );
    const text = await res.text();
    let body: { access_token?: unknown; expires_in?: unknown; error?: unknown } = {};
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      // Not JSON: the status says it.
    }
    if (res.status < 200 || res.status >= 300 || typeof body.access_token !== 'string') {
      // Entra's error code only (invalid_client, unauthorized_client...): never its description,
      // which may quote what was sent.
      const code = typeof body.error === 'string' ? ` ${body.error.slice(0, 60)}` : '';
      const permanent = res.status >= 400 && res.status < 500 && res.status !== 429 && res.status !== 408;
      return {
        failure: {
          ok: false,
          permanent,
          status: res.status,
          error: `Entra token: HTTP ${res.status}${code}`,
        },
      };
    }
    const seconds = Number(body.expires_in);
    const lifetime = Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 3_600_000;
    tokens.set(cacheKey(destination), { token: body.access_token, until: now + lifetime - TOKEN_MARGIN_MS });
    return { token: body.access_token };
  } catch (error) {
    if (ctx.signal?.aborted) throw ctx.signal.reason;
    return {
      failure: {
        ok: false,
        permanent: false,
        error: `Entra token: network error: ${(error as Error)?.message ?? 'unknown'}`,
      },
    };
  }
}

/**
 * The upload: the token first (cached; a refused one is the destination's refusal), then the
 * records as a JSON array. `request` sends it and reads the answer (senders.ts sendRequest).
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
  if (!outcome.ok && outcome.status === 401) tokens.delete(cacheKey(destination));
  return outcome;
}
