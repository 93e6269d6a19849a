/**
 * Keeps an action's hold while its holder works, however long the call it waits for takes (the
 * event actions, actions/events.ts; the account actions, identity/act-work.ts): every half second
 * of real time it checks the holder's clock, and once a quarter of the hold has passed since the
 * last renewal it renews the hold. A renewal the table refuses means another took the action: the
 * holder hears of it (`lost`) and no further renewal is tried. A table that does not answer is
 * tried again at the next beat, before the hold lapses.
 */
import type { Clock } from '../clock.ts';

/** Real time between the checks of whether a hold needs renewing. */
const HEARTBEAT_MS = 500;

export interface HoldRenewal {
  /** A renewal the holder made itself (a note written under its hold): counted from then. */
  renewed(at: number): void;
  stop(): void;
}

export function renewWhileHeld(options: {
  clock: Clock;
  holdMs: number;
  /** Renews the hold until `until`; false when the hold is no longer this holder's. */
  renew(now: number, until: number): Promise<boolean>;
  lost?(): void;
  failed(error: unknown): void;
}): HoldRenewal {
  const { clock, holdMs } = options;
  let renewedAt = clock.now();
  let busy = false;
  let gone = false;
  const timer = setInterval(() => {
    const now = clock.now();
    if (busy || gone || now - renewedAt < holdMs / 4) return;
    busy = true;
    options
      .renew(now, now + holdMs)
      .then((kept) => {
        if (kept) renewedAt = Math.max(renewedAt, now);
        else {
          gone = true;
          options.lost?.();
        }
      }, options.failed)
      .finally(() => {
        busy = false;
      });
  }, HEARTBEAT_MS);
  timer.unref?.();
  return {
    renewed: (at) => {
      renewedAt = Math.max(renewedAt, at);
    },
    stop: () => clearInterval(timer),
  };
}
