/**
 * A lone surrogate from the upstream, through the whole product: the emulator answers an event whose
 * JSON holds a `\ud800` escape (as a careless upstream may), the poll cycle records it and the Slack
 * and webhook destinations (real local receivers) get bodies any strict JSON parser takes: U+FFFD
 * where the lone half was. Before, the escape reached the bodies, and a strict receiver's 400
 * would have made the delivery dead, losing the alert.
 */
import { describe, expect, it } from 'vitest';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { useReceivers } from '../helpers/receiver.ts';
import { makeWorld } from '../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 2, credentials: 5 });
const db = useDynalite();
const receiver = useReceivers();
const ESCAPED_LONE = /\\ud[89a-f][0-9a-f]{2}(?!\\ud[c-f])/i;

describe('a lone surrogate from the upstream', () => {
  it('reaches every destination as U+FFFD, and the deliveries are sent', async () => {
    const [added] = emu.running.emulator.appendEvents(emu.running.emulator.dataset.tenant('acme').id, 1);
    if (!added) throw new Error('no event appended');
    added.item.highlights = { content: ['a lone half \ud800 of a pair in <mark>acme.test</mark>'] };
    const slack = await receiver({ status: 200, body: 'ok' });
    const hook = await receiver({ status: 200, body: 'ok' });
    const world = await makeWorld(emu, db, {
      sources: { tenantEvents: { lookback: 'P30D' } },
      destinations: { soc: { type: 'slack', url: slack.url }, siem: { type: 'webhook', url: hook.url } },
      routes: [{ name: 'all', to: ['soc', 'siem'] }],
      digest: { threshold: 1, maxItems: 20 },
    });
    const summary = await world.cycle('events');
    expect(summary.delivery.dead).toBe(0);
    const records = await world.runtime.deliveries.list({ limit: 100 });
    expect(records.filter((r) => r.id.includes(added.item.metadata.uid)).map((r) => r.status)).toEqual([
      'sent',
      'sent',
    ]);
    const bodies = [...slack.requests, ...hook.requests].map((r) => r.body);
    const carrying = bodies.filter((b) => b.includes('a lone half'));
    expect(carrying.length).toBeGreaterThanOrEqual(2);
    for (const body of carrying) {
      expect(ESCAPED_LONE.test(body)).toBe(false);
      expect(body).toContain('a lone half \ufffd of a pair');
    }
  });
});
