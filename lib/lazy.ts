/**
 * Code only some runs need, loaded when first needed (a dynamic import, which the Lambda bundles
 * split into a chunk of its own: infra/lambda-bundle.mjs), so a function's start loads only what
 * every run uses. Each module is loaded once: every caller shares one promise. A failure to load
 * is a LoadError that names what could not be loaded; the caller's work fails with it as with any
 * error (a delivery stays pending for the next pass), and the next call tries the load again.
 *
 * @example
 * const sending = lazily('the delivery pass's send path (deliver/sending.ts)', () => import('./sending.ts'));
 * const { sendAll } = await sending();
 */

/** A module that could not be loaded when first needed; `what` names it. */
export class LoadError extends Error {
  override readonly name = 'LoadError';
  readonly code = 'load';
  constructor(
    readonly what: string,
    cause: unknown,
  ) {
    super(`could not load ${what}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** `load`, called once when the result is first asked for; `what` names it in a LoadError. */
export function lazily<T>(what: string, load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () =>
    (loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw new LoadError(what, error);
    }));
}
