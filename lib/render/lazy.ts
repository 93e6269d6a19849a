/**
 * Rendering for a destination by its kind, each kind's renderer loaded when a destination of that
 * kind first needs it (lib/destinations/<kind>/body.ts): a function loads the code of the kinds
 * its config has, when it delivers to them, and never the rest (the Lambda bundles split each
 * kind into chunks of its own).
 */
import { bodyOf, type ResolvedDestination } from '../destinations/kinds.ts';
import type { DeliveryAlert, Notice, Rendered, RenderOptions } from './types.ts';

/** The messages `destination` receives for `alerts`. */
export async function renderFor(
  destination: ResolvedDestination,
  alerts: DeliveryAlert[],
  opts: RenderOptions,
): Promise<Rendered<unknown>[]> {
  return (await bodyOf(destination)).render(destination, alerts, opts);
}

/** A message to `destination` that is not about alerts: a test message, an operator notice. */
export async function noticeFor(
  destination: ResolvedDestination,
  notice: Notice,
  opts: RenderOptions,
): Promise<unknown> {
  return (await bodyOf(destination)).notice(destination, notice, opts);
}
