/**
 * What every renderer takes and makes: the options, a rendered message and a notice. Renderers are
 * pure: alerts in, payloads out, no I/O; each kind's payload is its own (its folder's render.ts),
 * and its body turns it into an HTTP request (or a terminal write).
 */
import type { DeliveryAlert } from '../model.ts';

export interface RenderOptions<K = unknown> {
  /** The destination's name in the config. */
  destination: string;
  /** Base of links into the upstream's web app (EXPOSURE_APP_URL). */
  appUrl: string;
  /** Over `threshold` alerts in one call, they go as one digest listing at most `maxItems`. */
  digest: { threshold: number; maxItems: number };
  now: Date;
  /**
   * What the destination's kind alone reads, as its face made it from the run (its
   * `renderOptions`, destinations/kind.ts), typed by the kind: shared code passes it on unread.
   */
  kindOptions?: K;
  /**
   * What a credential's identity line calls its provider (`Entra ID corp`), by the tenant whose
   * config names it (undefined: the top level) and its name there (render/identity.ts).
   */
  identityLabel?: (tenant: number | undefined, provider: string) => string | undefined;
}

/** One message to send, and the delivery records it settles when it is accepted. */
export interface Rendered<P> {
  deliveryIds: string[];
  payload: P;
  /** A short human line for logs and `deliveries list`, free of secrets and passwords. */
  summary: string;
  /**
   * Replies in the thread of `payload` (a digest to a Slack app): together with it they show
   * every item of `deliveryIds` once. Sent after it, in order (deliver/thread.ts).
   */
  thread?: P[];
}

/** A message that is not about alerts: an operator notice or a `destinations test` message. */
export interface Notice {
  title: string;
  text: string;
  /** `test` is marked as a test in every rendering. */
  kind: 'test' | 'ops';
}

export type { DeliveryAlert };
