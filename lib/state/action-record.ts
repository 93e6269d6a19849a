/**
 * The shapes of an action on events and of an audit entry: what actions.ts keeps and acted.ts
 * indexes, apart from both so neither imports the other (actions.ts loads acted.ts when first needed).
 */
export type EventActionType = 'ignore' | 'remediate' | 'unignore' | 'unremediate';

/** One uid's outcome: the upstream took it, or why not. */
export interface UidResult {
  uid: string;
  ok: boolean;
  error?: string;
}

export interface ActionRecord {
  id: string;
  type: EventActionType;
  uids: string[];
  /** `slack:<user id>`, an API client's name, `cli:<user>`. */
  by: string;
  at: string;
  reason?: string;
  /**
   * `pending` until the upstream answered; `answered` until its follow-ups are written; then
   * `done`. `forgotten`: the upstream never answered, nothing changed, and the id is free again.
   */
  status: 'pending' | 'answered' | 'done' | 'forgotten';
  results?: UidResult[];
  /** The uids whose flag this action changed (they get follow-ups). */
  changed?: string[];
  /** The call working on the action now (`hold`), and until when (ms): a lapsed hold is free. */
  holder?: string;
  heldUntil?: number;
  /** With `forgotten`: how the upstream failed, so a call that waited answers as the holder did. */
  unanswered?: { code: string; message: string; status?: number; retryAfterMs?: number };
}

/** An entry of the audit trail: an action, or a request refused before it acted (`refused`). */
export interface ActionAuditEntry extends Omit<ActionRecord, 'status' | 'type' | 'holder' | 'heldUntil'> {
  /** An event action, `silence`, `lookup`, an account action (lib/identity/act.ts), or `unknown`. */
  type: EventActionType | 'silence' | 'lookup' | 'unknown' | (string & {});
  /** Why nothing was done (a Slack user not allowed to act); no upstream was asked. */
  refused?: string;
  /** The Slack workspace the request came from, when it is not ours. */
  team?: string;
}

export interface EventFlags {
  ignored?: boolean;
  remediated?: boolean;
}
