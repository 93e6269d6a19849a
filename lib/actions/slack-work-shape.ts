/**
 * Slack work as data: what a request from Slack leaves for after its answer, as the API hands it
 * to a worker's queue. Apart from slack-work.ts (which does the work) so a worker can tell a queue
 * message of this kind at start without loading what does it.
 */
import type { ActRequest } from './events.ts';
import type { LookupQuery } from './lookup.ts';

export type SlackWork =
  | {
      kind: 'slack-action';
      request: ActRequest & { id: string };
      responseUrl?: string;
      /** The message, when an incoming webhook posted it: replaced through `responseUrl` once done. */
      replace?: {
        text?: string;
        blocks?: Record<string, unknown>[];
        flags: { ignored?: boolean; remediated?: boolean };
      };
    }
  | { kind: 'slack-lookup'; query: LookupQuery; responseUrl?: string }
  /**
   * An account action (lib/identity/act.ts) recorded by a door without the providers' secrets (the
   * API, a Slack menu): a worker finishes it by its id; a Slack click's answer goes to `responseUrl`.
   */
  | { kind: 'identity-action'; id: string; responseUrl?: string };

/** Whether a queue message is Slack work (functions/worker.ts). */
export function isSlackWork(value: unknown): value is SlackWork {
  const v = value as { kind?: unknown; request?: { id?: unknown }; query?: unknown } | null;
  return (
    (v?.kind === 'slack-action' && typeof v.request?.id === 'string') ||
    (v?.kind === 'slack-lookup' && typeof v.query === 'object' && v.query !== null) ||
    (v?.kind === 'identity-action' && typeof (v as { id?: unknown }).id === 'string')
  );
}
