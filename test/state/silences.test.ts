/**
 * The silence store (lib/state/silences.ts) on real dynalite: the active ones in one consistent
 * Query, expired ones kept and marked, ending one twice changes nothing, an unknown id is unknown.
 */
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../lib/clock.ts';
import type { Silence } from '../../lib/rules/silences.ts';
import { newSilenceId, SilenceStore } from '../../lib/state/silences.ts';
import { fakeClock } from '../helpers/clock.ts';
import { countingClient, useDynalite } from '../helpers/dynamo.ts';

const db = useDynalite();
const HOUR = 3_600_000;

function silence(now: number, over: Partial<Silence> = {}): Silence {
  return {
    id: newSilenceId(now),
    match: { types: ['paste'] },
    until: new Date(now + HOUR).toISOString(),
    reason: 'paste noise',
    createdBy: 'cli:alice',
    createdAt: new Date(now).toISOString(),
    ...over,
  };
}

describe('silence store', () => {
  it('ids sort by creation time, and look like the documented shape', () => {
    const a = newSilenceId(Date.parse('2026-11-23T00:00:00Z'));
    const b = newSilenceId(Date.parse('2026-11-23T00:00:01Z'));
    expect(a).toMatch(/^s-[0-9a-z]{9}-[0-9a-f]{6}$/);
    expect(a < b).toBe(true);
  });

  it('add, list, expire: expired ones are kept, marked; the active read is one consistent Query', async () => {
    const clock = fakeClock();
    const { client, requests } = countingClient(db.endpoint);
    const store = new SilenceStore({ client, tableName: await db.table(), clock });
    const now = clock.now();
    const first = silence(now);
    const second = silence(now + 1, {
      match: { kind: 'credential' },
      until: new Date(now + 2 * HOUR).toISOString(),
    });
    await store.create(first);
    await store.create(second);
    expect(await store.get(first.id)).toEqual(first);

    requests.length = 0;
    expect((await store.active()).map((s) => s.id)).toEqual([second.id, first.id]);
    expect(requests).toEqual([{ action: 'Query', pk: 'silence' }]);

    const marked = { ...first, expiredAt: new Date(now).toISOString(), expiredBy: 'runbook' };
    expect(await store.expire(first.id, 'runbook')).toEqual({ outcome: 'expired', silence: marked });
    expect((await store.active()).map((s) => s.id)).toEqual([second.id]);
    // Kept, marked, for the record.
    expect((await store.all()).map((s) => [s.id, s.expiredBy])).toEqual([
      [second.id, undefined],
      [first.id, 'runbook'],
    ]);
    // Ending it again changes nothing.
    clock.advance(60_000);
    expect(await store.expire(first.id, 'chatbot')).toEqual({ outcome: 'already', silence: marked });
    expect(await store.expire(newSilenceId(now), 'chatbot')).toEqual({ outcome: 'unknown' });

    // Its until passed: no longer active, nothing to end, and still listed.
    clock.advance(2 * HOUR);
    expect(await store.active()).toEqual([]);
    expect((await store.expire(second.id, 'chatbot')).outcome).toBe('already');
    expect(await store.all()).toHaveLength(2);
    client.destroy();
  });

  it('a consistent read: a silence just made is in the very next read', async () => {
    const store = new SilenceStore({ client: db.client, tableName: await db.table(), clock: systemClock });
    for (let i = 0; i < 5; i++) {
      const made = silence(Date.now());
      await store.create(made);
      expect((await store.active()).map((s) => s.id)).toContain(made.id);
    }
  });
});
