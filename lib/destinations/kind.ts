/**
 * A kind of destination (Slack, Teams, Jira, …): everything that differs between kinds, in one
 * folder, `lib/destinations/<kind>/`. The shared code (the delivery pass, its records, retries,
 * holds and settles; `config validate`, `preview`, `destinations test`) asks the kind and knows
 * no kind by name; kinds.ts is the one list of them.
 *
 * A kind has two parts, so a function loads only what it runs:
 * - its face (`index.ts`), which every function loads at start: its config schema, how its secrets
 *   are resolved, how it is described, its pace, whether it hears of actions. Small, and free of
 *   renderers.
 * - its body (loaded by `face.load()` when a message of the kind is first rendered or sent): how
 *   it renders alerts and notices, the request it sends, how it reads the answer, its follow-ups.
 *   The body's files (render.ts and the rest) sit beside it, with the kind's payload type.
 * What both need (the destination as resolved) is in its `types.ts`, so neither imports the other.
 * A body sends with what takes no kind (deliver/send-context.ts, outcome.ts, post.ts,
 * ticket-search.ts), never with deliver/senders.ts, which loads bodies: deliver/ depends on the
 * kinds, never the other way round (test/shape.test.ts finds any import cycle).
 *
 * @example
 * const body = await kindOf(destination.type).load();
 * const [message] = body.render(destination, alerts, opts);
 * const outcome = await send(destination, message.payload, message.deliveryIds, ctx); // deliver/senders.ts
 */
import type * as z from 'zod/mini';
import type { HttpRequest, Posted, SendOutcome } from '../deliver/outcome.ts';
import type { Answer, SendContext } from '../deliver/send-context.ts';
import type { Logger } from '../log.ts';
import type { FollowUpAction, ItemKind } from '../model.ts';
import type { DeliveryAlert, Notice, Rendered, RenderOptions } from '../render/types.ts';
import type { SecretRef } from '../rules/schema-parts.ts';

/** Looks a config value up (a `{ "secret": NAME }` in the secret object), at `key` of the destination. */
export type Resolve = (value: string | SecretRef, key: string) => string;

/** What every resolved destination has. */
export interface Resolved {
  name: string;
  type: string;
}

/**
 * How a destination hears of actions on what it was sent: its own message edited and replied to
 * (a Slack app), its incident resolved (PagerDuty), a comment on its ticket, an `action` body (a
 * webhook with `followUps`).
 */
export type FollowUpStyle = 'message' | 'incident' | 'ticket' | 'action';

/**
 * What a run says that a kind's renderer may read: each face takes what its kind reads
 * (`renderOptions`), and the shared code knows none of it.
 */
export interface RenderRun {
  /** The config's `actions`: the doors through which people act on alerts, by name. */
  actions?: Readonly<Record<string, unknown>>;
  /** The terminal takes ANSI colours. */
  color?: boolean;
}

/** What a key of the config means, for the config reference and `config schema`'s descriptions. */
export interface KeyDoc {
  text: string;
  example?: unknown;
}

export interface KindFace<C extends { type: string }, R extends Resolved, O = unknown> {
  readonly type: C['type'];
  /** The service's name, for people: `Microsoft Teams`. */
  readonly title: string;
  /** The config's shape for this kind (a strict object whose `type` is this kind's name). */
  readonly schema: z.ZodMiniType<C, unknown>;
  /** The destination with its secrets looked up (`get` registers each with the log redactor). */
  resolve(name: string, config: C, get: Resolve): R;
  /**
   * How far apart two messages to it go (ms, from the end of one send to the start of the next),
   * and what destinations that share one limit share (a URL, a routing key): those each keep that
   * many times the spacing, so together they keep within it.
   */
  pace?(destination: R): { everyMs: number; sharedBy?: string };
  /**
   * Sent while polling, page by page, before the cursor moves (a receiver that takes every item
   * and no digest): inline.ts.
   */
  readonly inline?: boolean;
  /**
   * Whether its digests go as threads: the parent, then the replies its renderer put in
   * `Rendered.thread`, with the thread's progress kept so a crash repeats at most one message
   * (deliver/thread.ts); its body's `reply` sends a reply.
   */
  threads?(destination: R): boolean;
  /**
   * A ticket system (no idempotency key): a create is marked before it is sent, and one of unknown
   * outcome is searched for before it is ever tried again (deliver/tickets.ts). `noun`: what it
   * calls a ticket (`issue`, `incident`), for people.
   */
  readonly tickets?: { noun: string };
  /** How it hears of actions on what it was sent; undefined: it does not. */
  followUps?(destination: R): FollowUpStyle | undefined;
  /**
   * The chat channel it posts to, by its id, where people also ask things of the app (a Slack
   * app's lookups): a channel that only one tenant's routes feed answers as that tenant. None for a
   * channel given by its name alone.
   */
  channel?(config: C): string | undefined;
  /** What sending to it is, in one line, without a secret (`preview`). */
  describe(config: C): string;
  /** What `config validate` warns about in this destination's config (at `path`). */
  warnings?(config: C, path: string): string[];
  /**
   * What its renderer reads beyond the shared options, made from the run: given to its body as
   * `RenderOptions.kindOptions`.
   */
  renderOptions?(run: RenderRun): O;
  /** What each key of its config means (its `docs.ts`, loaded by the CLI only), by key. */
  docs?(): Promise<Record<string, KeyDoc>>;
  /** Loads the body. */
  load(): Promise<KindBody<R, unknown, C, O>>;
}

/**
 * What a kind's follow-up is given by the delivery pass (deliver/follow-up-send.ts), which records
 * its outcome as any delivery's. Every message goes at the destination's pace: `send` and `request`
 * wait for its turn and count it; 'budget' when no turn came in time (return it: the pass stops).
 */
/**
 * What a kind's follow-up reads and changes of its delivery record (the store's record has these
 * and more): the item's kind and key, where its message went (`posted`) or the ticket it went
 * into, and whether a Slack app's edit is done (`followUp.edited`).
 */
export interface FollowUpRecord {
  id: string;
  kind: ItemKind;
  key: string;
  item: unknown;
  posted?: Posted & { digest?: boolean };
  ticket?: string;
  followUp?: { action: FollowUpAction; edited?: boolean };
}

export interface FollowUpSend<P, O = unknown> {
  /** The follow-up's record (`followUp.action` is `action`); `save` writes it as it is now. */
  record: FollowUpRecord;
  action: FollowUpAction;
  /** The item the follow-up is about, as the renderers take it. */
  alert: DeliveryAlert;
  opts: RenderOptions<O>;
  ctx: SendContext;
  log: Logger;
  /** Sends a payload of the kind, as its alerts are sent. */
  send(payload: P): Promise<SendOutcome | 'budget'>;
  /** Sends a request made for the destination, its answer read as the kind's. */
  request(request: HttpRequest): Promise<SendOutcome | 'budget'>;
  /** Waits for a turn for a message sent otherwise (false: none in time); `sent` counts it. */
  turn(): Promise<boolean>;
  sent(): void;
  /** Writes the record as it is now: a step that must not repeat when the rest is retried. */
  save(): Promise<void>;
  /**
   * A ticket kind: whether the record's ticket is its item's own (lists no other item), as the
   * item's delivery record says; an item whose record is gone counts as shared.
   */
  ownTicket(): Promise<boolean>;
}

/** What renders and sends, loaded when a message of the kind is first rendered or sent. */
export interface KindBody<R extends Resolved, P = unknown, C = unknown, O = unknown> {
  /** The messages `destination` receives for `alerts` (digests over the threshold). Pure. */
  render(destination: R, alerts: DeliveryAlert[], opts: RenderOptions<O>): Rendered<P>[];
  /** A message that is not about alerts: a `destinations test`, an operator notice. Pure. */
  notice(destination: R, notice: Notice, opts: RenderOptions<O>): P;
  /**
   * The HTTP request a payload is sent as (`deliveryIds` make keys such as a webhook's
   * Idempotency-Key); none for a kind that sends otherwise (`send`).
   */
  request?(destination: R, payload: P, deliveryIds: readonly string[], now: number): HttpRequest;
  /** How its answers read; by default as HTTP says (deliver/send-context.ts `readAnswer`). */
  read?(destination: R, answer: Answer, now: number): SendOutcome;
  /** Sends a payload itself, instead of POSTing its request: the terminal writes; Sentinel buys a token first. */
  send?(destination: R, payload: P, deliveryIds: readonly string[], ctx: SendContext): Promise<SendOutcome>;
  /**
   * A reply of a digest's thread, under its parent (what the parent's send answered, when it
   * said where it landed), its answer read as the kind's answers are. With the face's `threads`.
   */
  reply?(destination: R, payload: P, parent: Posted | undefined, ctx: SendContext): Promise<SendOutcome>;
  /** A ticket kind: the label a rendered ticket carries, by which it is found again. */
  labelOf?(payload: P): string | undefined;
  /**
   * A ticket kind: the ticket carrying `label`, if the system has one ('error' when the search
   * itself failed: the create waits).
   */
  search?(destination: R, label: string, ctx: SendContext): Promise<string | undefined | 'error'>;
  /** What the destination would refuse in `payload` (`config validate`'s render check). */
  problems?(payload: P): string[];
  /**
   * `destinations test`: once its test message was accepted, the other things its alerts do, each
   * tried and named (a Slack app edits the message and replies in its thread; PagerDuty resolves
   * the test's incident, so none stays open).
   */
  afterTest?(
    destination: R,
    payload: P,
    outcome: Extract<SendOutcome, { ok: true }>,
    ctx: SendContext,
  ): Promise<[string, SendOutcome][]>;
  /**
   * Tells the destination that someone acted on an item it was sent (its face's `followUps`):
   * edits and replies, resolves, comments, as the kind does.
   */
  followUp?(destination: R, f: FollowUpSend<P, O>): Promise<SendOutcome | 'budget'>;
  /** The payloads a follow-up to `alert` would send, named (`config validate` checks them too). */
  followUpSamples?(
    destination: R,
    alert: DeliveryAlert,
    action: FollowUpAction,
    opts: RenderOptions<O>,
  ): [string, P][];
  /**
   * The payload as `preview` shows it, from the destination as configured (JSON by default): what
   * is a secret, or computed with one at send time, described instead of shown.
   */
  show?(config: C, payload: P, deliveryIds: readonly string[], name: string): string;
  /** Its payload is made for a terminal already (controls stripped, colours its own): shown as it is. */
  readonly terminal?: boolean;
}
