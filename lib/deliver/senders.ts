/**
 * Sending a rendered payload to a destination: its kind builds the request and reads the answer
 * (lib/destinations/<kind>/body.ts); this module POSTs it within the send's timeout
 * (send-context.ts), and knows no kind by name.
 */
import { bodyOf } from '../destinations/kinds.ts';
import type { ResolvedDestination } from './destinations.ts';
import type { HttpRequest, SendOutcome } from './outcome.ts';
import { type Answer, postRequest, readAnswer, type SendContext } from './send-context.ts';

export type { HttpRequest, SendFailure, SendOutcome } from './outcome.ts';
export {
  DEFAULT_SEND_TIMEOUT_MS,
  type SendContext,
  type SendDeps,
  sendContext,
  sendTimeoutMs,
} from './send-context.ts';

/** What a renderer makes for a destination: only its kind knows its shape, and sends it. */
export type Payload = unknown;

/** The HTTP request a payload is sent as; undefined for a kind that sends otherwise (the terminal). */
export async function requestFor(
  destination: ResolvedDestination,
  payload: Payload,
  deliveryIds: readonly string[],
  now: number,
): Promise<HttpRequest | undefined> {
  return (await bodyOf(destination)).request?.(destination, payload, deliveryIds, now);
}

/** Reads an answer as `destination`'s kind means it. */
export async function readAs(
  destination: ResolvedDestination,
  answer: Answer,
  now: number,
): Promise<SendOutcome> {
  const body = await bodyOf(destination);
  return body.read ? body.read(destination, answer, now) : readAnswer(answer, now);
}

/** Sends one rendered payload to one destination. */
export async function send(
  destination: ResolvedDestination,
  payload: Payload,
  deliveryIds: readonly string[],
  ctx: SendContext,
): Promise<SendOutcome> {
  const body = await bodyOf(destination);
  // Named, so a stop can say whose answer it was waiting for (send-context.ts).
  if (body.send)
    return body.send(destination, payload, deliveryIds, { ...ctx, destination: destination.name });
  const request = body.request?.(destination, payload, deliveryIds, ctx.now());
  if (!request) return { ok: false, permanent: true, error: `${destination.type} has no request to send` };
  return sendRequest(destination, request, ctx);
}

/**
 * Sends one request made for `destination` (a thread reply, an edit) and reads its answer as the
 * destination's own.
 */
export async function sendRequest(
  destination: ResolvedDestination,
  request: HttpRequest,
  ctx: SendContext,
): Promise<SendOutcome> {
  const body = await bodyOf(destination);
  return postRequest(request, { ...ctx, destination: destination.name }, (answer, now) =>
    body.read ? body.read(destination, answer, now) : readAnswer(answer, now),
  );
}
