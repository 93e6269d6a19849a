/**
 * Answering a Slack request at its `response_url`: only under the configured prefix.
 *
 * The URL and the prefix are compared as the URL parser reads them (the same parser `fetch`
 * uses), never as strings: the same origin (scheme, host and port), no user info, and a path under
 * the prefix's path, taken as whole segments. So a prefix without its final `/`
 * (`https://hooks.slack.com`) still cannot let `https://hooks.slack.com.evil.example/` through,
 * and `@`, `\`, `%2f` or tab tricks in the URL are judged as the request would be sent. What is
 * POSTed to is the parsed URL, the one that was checked.
 */
import type { Logger } from '../log.ts';

export interface AnswerDeps {
  /** Answers go only to a `response_url` under this (`actions.slack.responseUrlPrefix`). */
  responseUrlPrefix: string;
  logger: Logger;
  /** POSTs JSON to a `response_url` (tests give a stand-in); fetch by default. */
  post?: (url: string, body: unknown) => Promise<void>;
}

/**
 * `url` as the parser reads it when it lies under `prefix` (same origin, no user info, its path
 * under the prefix's path); undefined otherwise, and for anything that does not parse.
 *
 * @example
 * underPrefix('https://hooks.slack.com/actions/T1/2/x', 'https://hooks.slack.com/') // URL
 * underPrefix('https://hooks.slack.com.evil.example/', 'https://hooks.slack.com') // undefined
 */
export function underPrefix(url: unknown, prefix: string): URL | undefined {
  if (typeof url !== 'string' || !URL.canParse(url) || !URL.canParse(prefix)) return undefined;
  const target = new URL(url);
  const base = new URL(prefix);
  if (base.origin === 'null' || target.origin !== base.origin) return undefined;
  if (target.username || target.password) return undefined;
  const path = base.pathname.endsWith('/') ? base.pathname : `${base.pathname}/`;
  return target.pathname.startsWith(path) ? target : undefined;
}

/** POSTs an answer to a `response_url`, only when it lies under the configured prefix. */
export async function answerAt(
  deps: AnswerDeps,
  url: unknown,
  body: Record<string, unknown>,
  timeoutMs = 10_000,
): Promise<void> {
  const target = underPrefix(url, deps.responseUrlPrefix);
  if (!target) {
    deps.logger.warn('a response_url outside responseUrlPrefix; not answered there', {
      prefix: deps.responseUrlPrefix,
    });
    return;
  }
  if (deps.post) return deps.post(target.href, body);
  const res = await fetch(target.href, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  await res.body?.cancel();
  if (!res.ok) throw new Error(`response_url answered HTTP ${res.status}`);
}
