/**
 * What a test of a Lambda entry needs around it: the environment the stack gives the function,
 * with local stand-ins (the emulator for the upstream, dynalite for the table, a config file for
 * the layer), set in process.env for the cold start and put back exactly afterwards; and SQS
 * records as the event source delivers them.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SQSRecord } from 'aws-lambda';
import { vi } from 'vitest';

/** What the Lambda runtime passes; only the remaining time is read. */
export const context = (ms = 30_000) => ({ getRemainingTimeInMillis: () => ms });

/** A dispatcher's queue URL; nothing is sent to it (tests capture what would be). */
export const QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/exposure-alerts-streams';

/**
 * Runs `body` with `vars` in process.env (read at the cold start, and left in place for the
 * invocations, as in a Lambda), then puts process.env back exactly: added keys deleted, changed
 * ones restored, on the same object (assigning a copy would replace Node's string-coercing env).
 * Log lines are kept out of the test output while it runs.
 */
export async function withEnvironment<T>(vars: Record<string, string>, body: () => Promise<T>): Promise<T> {
  const saved = { ...process.env };
  const quiet = [
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true),
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true),
  ];
  Object.assign(process.env, vars);
  try {
    return await body();
  } finally {
    for (const spy of quiet) spy.mockRestore();
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
  }
}

/**
 * A config that takes every path a worker has: two event streams (records created with
 * conditional puts) and one credential stream (batch writes), to a webhook that accepts and one
 * that refuses; `upstream` as given.
 */
export function everyPathConfig(accepting: string, refusing: string, upstream: Record<string, number>) {
  return {
    sources: {
      tenantEvents: { enabled: true, lookback: 'P7D' },
      identifierGroups: [{ id: 101, lookback: 'P7D' }],
      credentials: { domains: ['acme.test'], lookback: 'P60D', pageSize: 20 },
    },
    destinations: {
      ok: { type: 'webhook', url: accepting },
      refused: { type: 'webhook', url: refusing },
    },
    routes: [{ name: 'everything', to: ['ok', 'refused'] }],
    upstream,
  };
}

/** The variables the stack sets on a dispatcher or worker, pointed at local stand-ins; a fresh config file. */
export async function lambdaVariables(options: {
  apiUrl: string;
  dynamodbEndpoint: string;
  table: string;
  config: unknown;
  token?: string;
  extra?: Record<string, string>;
}): Promise<Record<string, string>> {
  const dir = await mkdtemp(join(tmpdir(), 'ea-lambda-'));
  const config = join(dir, 'alerts.config.json');
  await writeFile(config, JSON.stringify(options.config));
  return {
    EXPOSURE_API_URL: options.apiUrl,
    EXPOSURE_API_TOKEN: options.token ?? 'emu-acme-token',
    DYNAMODB_ENDPOINT: options.dynamodbEndpoint,
    TABLE_NAME: options.table,
    ALERTS_CONFIG: config,
    LOG_LEVEL: 'error',
    STREAM_QUEUE_URL: QUEUE_URL,
    ...options.extra,
  };
}

/** An SQS record as the event source hands it to the worker: `body` JSON-encoded unless a string. */
export function sqsRecord(
  body: unknown,
  options: { messageId?: string; sentAt?: number; receiveCount?: number } = {},
): SQSRecord {
  const sentAt = options.sentAt ?? Date.now();
  return {
    messageId: options.messageId ?? randomUUID(),
    receiptHandle: `handle-${randomUUID()}`,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    attributes: {
      ApproximateReceiveCount: String(options.receiveCount ?? 1),
      SentTimestamp: String(sentAt),
      SenderId: 'AROAEXAMPLE:dispatch-events',
      ApproximateFirstReceiveTimestamp: String(sentAt + 5),
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:exposure-alerts-streams',
    awsRegion: 'eu-west-1',
  };
}
