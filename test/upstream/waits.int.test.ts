/**
 * Waits the upstream asks for, and the budget a run has, against the emulator over HTTP: a 429
 * from the token exchange is a rate limit (its Retry-After, the shared slowdown, the warning
 * naming the exchange); a 503's Retry-After is honoured; the exchange ends by the run's deadline,
 * its turn included. Waits are recorded by the client's clock rather than slept.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { type Clock, systemClock } from '../../lib/clock.ts';
import { memoryLogger } from '../../lib/log.ts';
import { DynamoRateGovernor } from '../../lib/state/governor.ts';
import { marshall, unmarshall } from '../../lib/state/marshall.ts';
import { apiKeyExchange } from '../../lib/upstream/auth.ts';
import { UpstreamClient } from '../../lib/upstream/client.ts';
import { UpstreamError } from '../../lib/upstream/errors.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';

const emu = useEmulator();
const db = useDynalite();
const control = () => emu.running.emulator.control;

/** Real time, but every sleep is noted and cut to 1 ms: the test sees the wait asked for without spending it. */
function recordingClock(): Clock & { waits: number[] } {
  const waits: number[] = [];
  return {
    now: () => Date.now(),
    sleep: (ms, signal) => {
      waits.push(ms);
      return systemClock.sleep(1, signal);
    },
    waits,
  };
}

describe('waits and budgets', () => {
  it('a 429 from the token exchange: its Retry-After, the shared slowdown, and a warning naming generateToken', async () => {
    const table = await db.table();
    const governor = new DynamoRateGovernor(db.client, table, systemClock, {
      rates: { requestsPerSecond: 100, searchRequestsPerSecond: 50 },
    });
    control().addFault({ endpoint: 'generateToken', status: 429, retryAfter: 3 });
    const clock = recordingClock();
    const logger = memoryLogger('warn');
    const auth = apiKeyExchange({ baseUrl: emu.url, apiKey: 'emu-acme-key', clock, governor });
    const client = new UpstreamClient({ baseUrl: emu.url, auth, clock, governor, logger });
    await client.tokenTest();
    // Before: retried after the 5xx backoff (565 ms), no slowdown, and the warning named tokenTest.
    expect(clock.waits).toEqual([3000]);
    const item = await db.client.send(
      new GetItemCommand({
        TableName: table,
        Key: marshall({ pk: 'governor', sk: 'rate' }),
        ConsistentRead: true,
      }),
    );
    expect((unmarshall(item.Item ?? {}).slowUntil as number) - Date.now()).toBeGreaterThan(50_000);
    const warning = JSON.parse(logger.lines[0] as string);
    expect(warning).toMatchObject({
      message: 'upstream request failed; retrying',
      endpoint: 'generateToken',
      code: 'rate_limited',
    });
  });

  it('a 503 with Retry-After is waited for as asked, not after the backoff', async () => {
    control().addFault({ endpoint: 'tokenTest', status: 503, retryAfter: 6 });
    const clock = recordingClock();
    const client = emu.client('emu-acme-token', { clock, backoffBaseMs: 500 });
    await client.tokenTest();
    expect(clock.waits).toEqual([6000]);
  });

  it('a 503 whose Retry-After would pass the budget ends the request with the budget, not after it', async () => {
    control().addFault({ endpoint: 'tokenTest', status: 503, retryAfter: 30 });
    const client = emu.client('emu-acme-token');
    const started = Date.now();
    const error = await client.tokenTest({ deadline: Date.now() + 2_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as Error).message).toMatch(/no retry: waiting 30 s would pass the time budget/);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('the token exchange ends by the run deadline: a slow exchange is a spent budget, not a hang', async () => {
    control().addFault({ endpoint: 'generateToken', delayMs: 10_000 });
    const auth = apiKeyExchange({ baseUrl: emu.url, apiKey: 'emu-acme-key' });
    const client = new UpstreamClient({ baseUrl: emu.url, auth });
    const started = Date.now();
    const error = await client.tokenTest({ deadline: Date.now() + 1_500 }).catch((e: unknown) => e);
    const took = Date.now() - started;
    control().clearFaults();
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).budgetSpent).toBe(true);
    expect(took).toBeGreaterThanOrEqual(1_400);
    expect(took).toBeLessThan(2_500);
  });

  it('and its turn: no turn before the deadline ends the exchange there', async () => {
    const table = await db.table();
    const rates = { requestsPerSecond: 2, searchRequestsPerSecond: 1 };
    const busy = new DynamoRateGovernor(db.client, table, systemClock, { rates, searching: false });
    // Another run books the lane a few seconds ahead.
    await busy.take('basic', {});
    const queued = Array.from({ length: 2 }, () => busy.take('basic', {}));
    const governor = new DynamoRateGovernor(db.client, table, systemClock, { rates, searching: false });
    const auth = apiKeyExchange({ baseUrl: emu.url, apiKey: 'emu-acme-key', governor });
    const client = new UpstreamClient({ baseUrl: emu.url, auth, governor });
    const started = Date.now();
    const error = await client.tokenTest({ deadline: Date.now() + 500 }).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(
      control()
        .calls('generateToken')
        .filter((c) => Date.parse(c.at) >= started),
    ).toHaveLength(0);
    await Promise.all(queued);
  });
});
