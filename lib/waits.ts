/**
 * What this process is waiting for outside itself right now: DynamoDB, the upstream, a destination,
 * an identity provider, a turn from the rate governor. A stop that cannot wait any longer for the
 * next safe point names them (cli/run.ts): "stopped by SIGINT while waiting for DynamoDB at …".
 *
 * The process's, as the log's context is (log.ts): a wait is marked where the request is made, in
 * clients that are built once and shared, and only the CLI reads the list. A label names a service
 * and where it is (an origin, never a path or query: a destination's path can be its secret).
 *
 * @example
 * const res = await waitingFor(`the upstream at ${originOf(url)}`, fetch(url));
 */

const pending = new Map<object, string>();

/** `work`, marked as a wait for `what` until it settles. */
export function waitingFor<T>(what: string, work: Promise<T>): Promise<T> {
  const mark = {};
  pending.set(mark, what);
  return work.finally(() => pending.delete(mark));
}

/** What the process waits for now, each once, the longest-waiting first. */
export function waitsNow(): string[] {
  return [...new Set(pending.values())];
}

/** Where a URL points, without its path, query or credentials: `https://hooks.slack.com`. */
export function originOf(url: string): string {
  return URL.canParse(url) ? new URL(url).origin : 'an address that is not a URL';
}
