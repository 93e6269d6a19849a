/**
 * The API app as a Lambda handler for Function URL events (payload v2), through hono/aws-lambda:
 * whatever the app answers goes back as it is, status, headers and bytes, so every route answers
 * the same here as under `serve` (an empty 200 to Slack, an HTML page, a binary file).
 *
 * - The body is always taken from the adapter as bytes, then sent as text when it is valid UTF-8
 *   and not content-encoded (Lambda returns the text's UTF-8, the very same bytes), else as
 *   base64: the adapter alone guesses from the content type, and would turn a body with none, or
 *   non-UTF-8 bytes under a text type, into something else.
 * - A GET or HEAD event that carries a body: a Request cannot have one, so the body is dropped,
 *   as a server would ignore it.
 * - An event the adapter cannot turn into a Request at all never reaches the app; the adapter
 *   would answer it in plain text, so it gets the API's JSON error instead.
 */
import type { APIGatewayProxyStructuredResultV2, Context, LambdaFunctionURLEvent } from 'aws-lambda';
import type { Env, Hono, Schema } from 'hono';
import { handle, type LambdaContext, type LambdaEvent } from 'hono/aws-lambda';
import type { ErrorBody } from './errors.ts';

export type FunctionUrlHandler = (
  event: LambdaFunctionURLEvent,
  context?: Context,
) => Promise<APIGatewayProxyStructuredResultV2>;

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The body as Lambda should carry it: text when that gives back the same bytes, else base64. */
function lambdaBody(bytes: Buffer, encoding: string | undefined): { body: string; isBase64Encoded: boolean } {
  if (!encoding || /^identity$/i.test(encoding)) {
    try {
      return { body: UTF8.decode(bytes), isBase64Encoded: false };
    } catch {
      // Not UTF-8: base64 below.
    }
  }
  return { body: bytes.toString('base64'), isBase64Encoded: true };
}

export function createLambdaHandler<E extends Env, S extends Schema, B extends string>(
  app: Hono<E, S, B>,
): FunctionUrlHandler {
  // The events the app itself answered (the adapter passes the event on to it).
  const reached = new WeakSet<object>();
  const inner = handle(
    {
      fetch: (request: Request, env: { event: object }, context: unknown) => {
        reached.add(env.event);
        return app.fetch(request, env as never, context as never);
      },
    } as unknown as Hono,
    // Every body comes back as base64: its bytes, whatever its content type says.
    { isContentTypeBinary: () => true },
  );
  return async (event, context) => {
    const method = event.requestContext?.http?.method?.toUpperCase();
    const adapted =
      (method === 'GET' || method === 'HEAD') && event.body ? { ...event, body: undefined } : event;
    // The adapter's own event types are narrower than AWS's (e.g. `authentication: null`); the shape is the same.
    const result = await inner(adapted as unknown as LambdaEvent, context as unknown as LambdaContext);
    if (!reached.has(adapted)) {
      const body: ErrorBody = {
        error:
          result.statusCode === 400
            ? { code: 'invalid_request', message: 'the request is malformed' }
            : { code: 'internal_error', message: 'the request could not be handled' },
      };
      return {
        statusCode: result.statusCode === 400 ? 400 : 500,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        isBase64Encoded: false,
      };
    }
    const headers = (result.headers ?? {}) as Record<string, string>;
    const bytes = Buffer.from(result.body ?? '', result.isBase64Encoded ? 'base64' : 'utf8');
    const cookies = (result as { cookies?: string[] }).cookies;
    return {
      statusCode: result.statusCode,
      headers,
      ...lambdaBody(bytes, headers['content-encoding']),
      ...(cookies?.length ? { cookies } : {}),
    };
  };
}
