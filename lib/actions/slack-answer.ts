/** Answering a Slack request at its `response_url`: only under the configured prefix. */
import type { Logger } from '../log.ts';

export interface AnswerDeps {
  /** Answers go only to a `response_url` that starts with this (`actions.slack.responseUrlPrefix`). */
  responseUrlPrefix: string;
  logger: Logger;
  /** POSTs JSON to a `response_url` (tests give a stand-in); fetch by default. */
  post?: (url: string, body: unknown) => Promise<void>;
}

/** POSTs an answer to a `response_url`, only when it starts with the configured prefix. */
export async function answerAt(
  deps: AnswerDeps,
  url: unknown,
  body: Record<string, unknown>,
  timeoutMs = 10_000,
): Promise<void> {
  if (typeof url !== 'string' || !url.startsWith(deps.responseUrlPrefix)) {
    deps.logger.warn('a response_url outside responseUrlPrefix; not answered there', {
      prefix: deps.responseUrlPrefix,
    });
    return;
  }
  if (deps.post) return deps.post(url, body);
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  await res.body?.cancel();
  if (!res.ok) throw new Error(`response_url answered HTTP ${res.status}`);
}
