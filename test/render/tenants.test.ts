/**
 * Every message names its tenant (docs/configuration.md): a `tenants` entry's items show the
 * tenant's name in Slack, Teams, e-mail, PagerDuty, Jira, ServiceNow, Discord and the terminal; the
 * webhook body, Splunk events and Sentinel records carry `tenant: {id, name}`; a message (a digest,
 * a credential group, a webhook body) never mixes tenants, and tenants take turns; the top-level
 * sources' items look as they always did.
 */
import { describe, expect, it } from 'vitest';
import type { DeliveryAlert } from '../../lib/model.ts';
import {
  credentialAlert,
  eventAlert,
  makeCredential,
  makeEvent,
  type RenderTarget,
  renderOptions,
  renderTo,
  toDelivery,
} from './fixtures.ts';

const GLOBEX = { id: 1002, name: 'Globex' };
const INITECH = { id: 1003, name: 'Initech' };

function event(uid: string, tenant?: typeof GLOBEX): DeliveryAlert {
  const base = toDelivery(eventAlert(makeEvent({ metadata: { uid } })));
  return tenant
    ? { ...base, tenant, key: `${tenant.id}:${uid}`, deliveryId: `soc~event~${tenant.id}:${uid}` }
    : base;
}
function credential(id: number, tenant?: typeof GLOBEX): DeliveryAlert {
  const base = toDelivery(credentialAlert(makeCredential({ id, domain: 'acme.test' })));
  return tenant
    ? { ...base, tenant, key: `${tenant.id}:${id}`, deliveryId: `soc~credential~${tenant.id}:${id}` }
    : base;
}

const single = renderOptions({ digest: { threshold: 100, maxItems: 20 } });
const render = (target: RenderTarget, alerts: DeliveryAlert[], opts = single) =>
  renderTo(target, alerts, opts);
const text = (value: unknown) => JSON.stringify(value);
/** The payload of the first message, as the shape the test reads. */
async function first<T>(target: RenderTarget, alerts: DeliveryAlert[]): Promise<T> {
  const [message] = await render(target, alerts);
  if (!message) throw new Error(`no message for ${target.type}`);
  return message.payload as T;
}

describe('a tenant in every message', () => {
  it('the chat, mail, paging and ticket messages name it; the top level is unchanged', async () => {
    const alerts = [event('t/o/1', INITECH)];
    const [slack] = await render({ type: 'slack' }, alerts);
    expect(text(slack?.payload)).toMatch(/MEDIUM · Initech · /);
    expect((await first<{ text: string }>({ type: 'slack' }, alerts)).text).toMatch(/^Initech: /);
    expect(text((await render({ type: 'teams' }, alerts))[0]?.payload)).toContain('"text":"Initech"');
    expect((await first<{ subject: string }>({ type: 'email' }, alerts)).subject).toMatch(/^\[Initech\] /);
    const page = (await render({ type: 'pagerduty' }, alerts))[0]?.payload as {
      dedup_key: string;
      payload: { summary: string };
    };
    expect(page.payload.summary).toMatch(/^Initech: /);
    expect(page.dedup_key).toBe('event:1003:t/o/1');
    expect((await first<{ summary: string }>({ type: 'jira' }, alerts)).summary).toMatch(/^Initech: /);
    expect(
      (await first<{ short_description: string }>({ type: 'servicenow' }, alerts)).short_description,
    ).toMatch(/^Initech: /);
    expect(
      (await first<{ embeds: { title: string }[] }>({ type: 'discord' }, alerts)).embeds[0]?.title,
    ).toMatch(/· Initech · /);
    expect((await render({ type: 'console' }, alerts))[0]?.payload).toMatch(/^\[Initech\] /);
    // The top level's items: no tenant anywhere.
    const top = [event('t/o/2')];
    for (const type of ['slack', 'email', 'pagerduty', 'discord', 'console'] as const)
      expect(text(await render({ type }, top))).not.toMatch(/Initech|Globex|"tenant":\{/);
  });

  it('the webhook body, Splunk events and Sentinel records carry tenant {id, name}', async () => {
    const alerts = [event('t/o/1', GLOBEX), event('t/o/2', INITECH), event('t/o/3')];
    const bodies = (await render({ type: 'webhook' }, alerts)).map(
      (r) => r.payload as { tenant?: unknown; items: unknown[] },
    );
    expect(bodies.map((b) => b.tenant)).toEqual([GLOBEX, INITECH, undefined]);
    expect(bodies.every((b) => b.items.length === 1)).toBe(true);
    const { events } = await first<{ events: { event: { tenant?: unknown } }[] }>({ type: 'splunk' }, alerts);
    expect(events.map((e) => e.event.tenant)).toEqual([GLOBEX, INITECH, undefined]);
    const { records } = await first<{ records: { tenant?: unknown }[] }>({ type: 'sentinel' }, alerts);
    expect(records.map((r) => r.tenant)).toEqual([GLOBEX, INITECH, undefined]);
  });

  it('digests and credential groups never mix tenants, and the tenants take turns', async () => {
    const many = [
      ...Array.from({ length: 8 }, (_, i) => event(`t/o/g${i}`, GLOBEX)),
      ...Array.from({ length: 2 }, (_, i) => event(`t/o/i${i}`, INITECH)),
    ];
    // Over the threshold of 5: Globex's eight make a digest of their own; Initech's two go alone.
    const digests = await render(
      { type: 'slack' },
      many,
      renderOptions({ digest: { threshold: 5, maxItems: 20 } }),
    );
    expect(digests).toHaveLength(3);
    expect(text(digests[0]?.payload)).toContain('Globex · Exposure digest · 8 events');
    expect(digests[0]?.deliveryIds).toHaveLength(8);
    expect(digests.slice(1).every((d) => text(d.payload).includes('Initech'))).toBe(true);
    // Single messages: Globex, Initech, Globex, Initech, then the rest of Globex.
    const singles = (await render({ type: 'slack' }, many)).map((r) =>
      text(r.payload).includes('Globex') ? 'G' : 'I',
    );
    expect(singles.join('')).toBe('GIGIGGGGGG');
    // Tickets: a tenant under the threshold gets one ticket per item (never a group of logins),
    // though all tenants together are over it; the one over it gets its digest.
    const forTickets = [
      ...Array.from({ length: 8 }, (_, i) => event(`t/o/g${i}`, GLOBEX)),
      credential(1, INITECH),
      credential(2, INITECH),
    ];
    const over5 = renderOptions({ digest: { threshold: 5, maxItems: 20 } });
    for (const type of ['jira', 'servicenow'] as const)
      expect((await render({ type }, forTickets, over5)).map((r) => r.deliveryIds.length)).toEqual([8, 1, 1]);
    const logins = await render({ type: 'slack' }, [
      credential(1, GLOBEX),
      credential(2, INITECH),
      credential(3, GLOBEX),
    ]);
    expect(logins.map((r) => r.deliveryIds.length)).toEqual([2, 1]);
    expect(text(logins[0]?.payload)).toContain('Globex · Leaked credentials');
  });
});
