/**
 * What a send comes to (accepted, retried, never), and the HTTP request a destination is sent:
 * the shapes senders.ts and each kind's body share, apart so no body imports senders.ts (which
 * loads the bodies).
 */

/** Where a message landed: the channel's id and the message's `ts` (a Slack app). */
export interface Posted {
  channel: string;
  ts: string;
}

export type SendOutcome =
  | {
      ok: true;
      status?: number;
      /** Where the message landed, when the destination says (a Slack app: the channel id and `ts`). */
      posted?: Posted;
      /** The ticket it made (a Jira issue key). */
      ticket?: string;
      /** The destination said its rate is spent: the next message to it waits this long (Discord). */
      holdMs?: number;
    }
  | {
      ok: false;
      permanent: boolean;
      status?: number;
      /** The answer's `Retry-After`, in ms, at most an hour. */
      retryAfterMs?: number;
      /** A 429: the destination limits our rate (the pass pauses it; no attempt counted). */
      rateLimited?: true;
      /** A 413: this body is too large for the destination. */
      tooLarge?: true;
      error: string;
    };

/** An answer that was not an acceptance. */
export type SendFailure = Extract<SendOutcome, { ok: false }>;

export interface HttpRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}
