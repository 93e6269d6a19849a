/**
 * Golden keys: every key derived for a delivery, fixed as literal strings, so a move of code that
 * changes one fails here. A deployment upgraded across such a change would find none of its records
 * (the delivery ids and stored keys are the dedupe markers), open a second ticket (Jira labels,
 * ServiceNow `correlation_id`), page again (PagerDuty `dedup_key`) or post a second thread and
 * webhook body (the thread key, `Idempotency-Key`): each item sent twice.
 *
 * The expected values were computed on the code as it was before destination kinds got one folder
 * each (commit 2038d90), with the same inputs as below (the inputs section copied verbatim into a
 * script there, which rendered through that commit's `renderFor` and took the webhook's header from
 * its `buildRequest`), and pasted here; they are not computed by the code under test. A value here
 * changes only with a migration that keeps the old keys found.
 */
import { describe, expect, it } from 'vitest';
import { threadKey } from '../../lib/deliver/thread.ts';
import { bodyOf, type DestinationConfig, previewDestination } from '../../lib/destinations/kinds.ts';
import type { DeliveryAlert, TenantRef } from '../../lib/model.ts';
import { itemKey } from '../../lib/poll/ids.ts';
import { webhookIdempotencyKey } from '../../lib/render/keys.ts';
import type { RenderOptions } from '../../lib/render/types.ts';
import { deliveryId, followUpId, recordKey } from '../../lib/state/records/record.ts';
import type { Credential, EventItem } from '../../lib/upstream/schemas.ts';

// --- The inputs (the same, value for value, as those the golden values were computed from) -------

const NOW = new Date('2026-11-21T12:00:00Z');
const GLOBEX: TenantRef = { id: 1001, name: 'Globex' };
const EVENT_UID = 'forum_post/darkforum/thread/1/post/2';
const LONG_UID = `forum_post/${'x'.repeat(300)}`;
/** Over DynamoDB's 2,048 bytes of partition key: stored under a cut and its hash. */
const HUGE_UID = `forum_post/${'y'.repeat(2_100)}`;
const ACTION = '01JDGOLDEN0000000000ACTION';

function event(uid: string, severity: 'critical' | 'high' | 'medium' | 'low' | 'info' = 'high'): EventItem {
  return {
    metadata: {
      estimated_created_at: '2026-11-20T10:00:00Z',
      matched_at: '2026-11-20T10:05:00Z',
      type: 'forum_post',
      uid,
      severity,
    },
    tenant_metadata: { severity: { original: severity }, tags: [], notes: '' },
    identifiers: [{ id: 12, name: 'acme.test' }],
    highlights: { content: ['mention of <mark>acme.test</mark> in a forum post'] },
  } as EventItem;
}

function credential(id: number, domain = 'example.com'): Credential {
  return {
    id,
    identity_name: `user${id}@${domain}`,
    domain,
    hash: '*******',
    hash_type: 'plaintext',
    imported_at: '2026-11-20T08:00:00+00:00',
    source_id: 'collection-1',
    source: {
      id: 'collection-1',
      name: 'Collection #1',
      breached_at: '2026-01-01T00:00:00Z',
      leaked_at: '2026-02-01T00:00:00Z',
    },
  };
}

/** An alert bound for `destination`, its delivery id made as the delivery pass makes it. */
function eventTo(destination: string, uid: string, tenant?: TenantRef): DeliveryAlert {
  const key = itemKey(uid, tenant?.id);
  const source = tenant ? `tenant:${tenant.id}` : 'tenant';
  return {
    kind: 'event',
    key,
    source,
    ...(tenant ? { tenant } : {}),
    item: event(uid),
    deliveryId: deliveryId(destination, 'event', key),
    destination,
    routes: ['all'],
  };
}

function credentialTo(destination: string, id: number, tenant?: TenantRef): DeliveryAlert {
  const key = itemKey(String(id), tenant?.id);
  const item = credential(id);
  const source = tenant ? `credentials:${tenant.id}:${item.domain}` : `credentials:${item.domain}`;
  return {
    kind: 'credential',
    key,
    source,
    ...(tenant ? { tenant } : {}),
    item,
    deliveryId: deliveryId(destination, 'credential', key),
    destination,
    routes: ['all'],
  };
}

/** What a digest is made of: three events and two credentials of the top level, three of Globex's events. */
function digestSet(destination: string): DeliveryAlert[] {
  return [
    eventTo(destination, 'forum_post/darkforum/thread/10'),
    eventTo(destination, 'forum_post/darkforum/thread/11'),
    credentialTo(destination, 5001),
    eventTo(destination, 'forum_post/darkforum/thread/12'),
    credentialTo(destination, 5002),
    eventTo(destination, 'paste/pastebin/a1', GLOBEX),
    eventTo(destination, 'paste/pastebin/a2', GLOBEX),
    eventTo(destination, 'paste/pastebin/a3', GLOBEX),
  ];
}

const options = (destination: string, threshold: number): RenderOptions => ({
  destination,
  appUrl: 'https://app.example.test',
  digest: { threshold, maxItems: 20 },
  now: NOW,
});

const CONFIGS: Record<string, DestinationConfig> = {
  siem: { type: 'webhook', url: 'https://siem.example.test/in' },
  'soc-app': { type: 'slack', token: 'xoxb-test', channel: 'C0123ABCD' },
  pager: { type: 'pagerduty', routingKey: 'key', credentialSeverity: 'error' },
  tickets: {
    type: 'jira',
    url: 'https://acme.atlassian.test',
    email: 'a@example.test',
    apiToken: 't',
    project: 'SEC',
    issueType: 'Task',
  },
  incidents: {
    type: 'servicenow',
    url: 'https://acme.service-now.test',
    username: 'u',
    password: 'p',
    table: 'incident',
  },
};

// --- The golden values (computed at commit 2038d90) -----------------------------------------------

const GOLDEN = {
  ids: {
    event: 'soc~event~forum_post/darkforum/thread/1/post/2',
    credential: 'soc~credential~4242',
    tenantEvent: 'soc~event~1001:forum_post/darkforum/thread/1/post/2',
    tenantCredential: 'soc~credential~1001:4242',
    escapedName: 'soc%232%7Ex%25~event~forum_post/darkforum/thread/1/post/2',
    followUp: 'soc~followup~01JDGOLDEN0000000000ACTION~event~forum_post/darkforum/thread/1/post/2',
    tenantFollowUp: 'soc%232~followup~01JDGOLDEN0000000000ACTION%7E1~credential~1001:4242',
    storedKey: 'dlv#soc#event#forum_post/darkforum/thread/1/post/2',
    storedFollowUpKey: 'fu#soc#01JDGOLDEN0000000000ACTION#credential#4242',
    storedLongKey: `dlv#soc#event#forum_post/${'x'.repeat(300)}`,
    storedHugeKey: {
      length: 2048,
      tail: 'yyyyyyyy~sha256:f55d6ecc9a7b9e7079af713aeab94277d206b420e6060fd91ee7088d0df3601c',
    },
  },
  webhook: {
    one: 'c62dd4e4e4684a8df701c41a4b2710c9734f2bb4bb80113304026156e4d000d0',
    set: 'cb7c4b322dddf9e6774e9b0656da4c3e5b50554a51bdd38d80ef78b1096d0d60',
    setReversed: 'cb7c4b322dddf9e6774e9b0656da4c3e5b50554a51bdd38d80ef78b1096d0d60',
    bodies: [
      '079bd42e655598eefd35c7cc1452d62413a81f0f3ece5c562a19efc60495bec2',
      'e9f877818e11699980c00b5a5b366597fae6a57add7e673f018b9a8995331255',
      '3024936c162ff23ec64cd592705d77b84000206ac05aaf070191da6d96369b80',
    ],
    notice: 'e1bb23f3737b21f4394c9c84071645e4d6e1cb2e374b5570378c4fc2649989ff',
  },
  slackThread: {
    digests: [
      '11e586c4732708eb2ccbe34267a89558ecf57603a89f4747ea7c8520ee1a9029',
      '356405b5d585b3903a23fae4e972d35737ee6d7ab31b298160abf27cab975e0f',
      'ef5de84b5e78ec6d1e5055b68a4d52ba7557914f235de03bab0b57e3581cd3d3',
    ],
    set: 'b217333187cde25ee287344f3941e33ade55878b393ff194d2eb79aea95a17a8',
  },
  pagerduty: {
    single: [
      'event:forum_post/darkforum/thread/1/post/2',
      'credential:4242',
      'event:1001:forum_post/darkforum/thread/1/post/2',
      'sha256:8ca9314bb0400f6dd660b073d1476f8668f7a79b096bc97edbe233cd3a9c16f4',
    ],
    digests: [
      '91d57edc29dde7532367fe85eff774979a5e33e0ea0cb2531b2a3f3e8baaff59',
      '783aee49ff1142a50354002a4ae293dd2ac5357d34d6dd731d05a4292925473f',
      'e6bafdf0d3d157396d71806c0cc6d30566f3f92a0d9310bd22067bfdd35e1d6a',
    ],
  },
  tickets: {
    jira: {
      single: [['exposure-eedfe7b734346b7b'], ['exposure-8cded5ea19319578'], ['exposure-03a8f52d9b9e288d']],
      digests: [['exposure-c0a58c4b8d3d6a26'], ['exposure-e5a4cb6a9b965036'], ['exposure-023a3a2e66f6cd95']],
    },
    servicenow: {
      single: ['exposure-9ffbc6bf7dc0d135', 'exposure-6212793ced9a40ee', 'exposure-b84cd7f952dcb50a'],
      digests: ['exposure-71028e982e4d8896', 'exposure-d137290cffc18527', 'exposure-0e2db5814c746a38'],
    },
  },
};

// --- The keys today -------------------------------------------------------------------------------

/** The messages the destination `name` receives for `alerts`, rendered by its kind's body. */
async function render(name: string, alerts: DeliveryAlert[], threshold: number) {
  const destination = previewDestination(name, CONFIGS[name] as DestinationConfig);
  const body = await bodyOf(destination);
  return { destination, body, messages: body.render(destination, alerts, options(name, threshold)) };
}

describe('every key derived for a delivery is what it was before destination kinds moved', () => {
  it('delivery ids, follow-up ids and stored keys', () => {
    expect({
      event: deliveryId('soc', 'event', EVENT_UID),
      credential: deliveryId('soc', 'credential', '4242'),
      tenantEvent: deliveryId('soc', 'event', itemKey(EVENT_UID, GLOBEX.id)),
      tenantCredential: deliveryId('soc', 'credential', itemKey('4242', GLOBEX.id)),
      escapedName: deliveryId('soc#2~x%', 'event', EVENT_UID),
      followUp: followUpId('soc', 'event', EVENT_UID, ACTION),
      tenantFollowUp: followUpId('soc#2', 'credential', itemKey('4242', GLOBEX.id), `${ACTION}~1`),
      storedKey: recordKey('soc', 'event', EVENT_UID).pk,
      storedFollowUpKey: recordKey('soc', 'credential', '4242', ACTION).pk,
      storedLongKey: recordKey('soc', 'event', LONG_UID).pk,
      storedHugeKey: ((pk) => ({ length: pk.length, tail: pk.slice(-80) }))(
        recordKey('soc', 'event', HUGE_UID).pk,
      ),
    }).toEqual(GOLDEN.ids);
  });

  it("a webhook's Idempotency-Key, for one item, a set in any order, each rendered body and a notice", async () => {
    const one = deliveryId('siem', 'event', EVENT_UID);
    const set = digestSet('siem').map((a) => a.deliveryId);
    const { destination, body, messages } = await render('siem', digestSet('siem'), 2);
    const header = (payload: unknown, ids: readonly string[]) =>
      body.request?.(destination, payload, ids, NOW.getTime()).headers['Idempotency-Key'];
    expect({
      one: webhookIdempotencyKey('siem', [one]),
      set: webhookIdempotencyKey('siem', set),
      setReversed: webhookIdempotencyKey('siem', [...set].reverse()),
      bodies: messages.map((m) => header(m.payload, m.deliveryIds)),
      notice: header({ version: 1, kind: 'test', sentAt: '2026-11-21T12:00:00Z' }, []),
    }).toEqual(GOLDEN.webhook);
  });

  it("a Slack app digest's thread key", async () => {
    const { messages } = await render('soc-app', digestSet('soc-app'), 2);
    expect({
      digests: messages.filter((m) => m.thread).map((m) => threadKey('soc-app', m.deliveryIds)),
      set: threadKey(
        'soc-app',
        digestSet('soc-app').map((a) => a.deliveryId),
      ),
    }).toEqual(GOLDEN.slackThread);
  });

  it("PagerDuty's dedup_key: an event, a credential, a tenant's event, one past 255 characters, digests", async () => {
    const single = [
      eventTo('pager', EVENT_UID),
      credentialTo('pager', 4242),
      eventTo('pager', EVENT_UID, GLOBEX),
      eventTo('pager', LONG_UID),
    ];
    const keys = async (alerts: DeliveryAlert[], threshold: number) =>
      (await render('pager', alerts, threshold)).messages.map(
        (m) => (m.payload as { dedup_key: string }).dedup_key,
      );
    expect({
      single: await keys(single, 100),
      digests: await keys(digestSet('pager'), 2),
    }).toEqual(GOLDEN.pagerduty);
  });

  it("Jira labels and ServiceNow's correlation_id, of single items and digests", async () => {
    const single = (name: string) => [
      eventTo(name, EVENT_UID),
      credentialTo(name, 4242),
      eventTo(name, EVENT_UID, GLOBEX),
    ];
    const jira = async (alerts: DeliveryAlert[], threshold: number) =>
      (await render('tickets', alerts, threshold)).messages.map(
        (m) => (m.payload as { labels: string[] }).labels,
      );
    const servicenow = async (alerts: DeliveryAlert[], threshold: number) =>
      (await render('incidents', alerts, threshold)).messages.map(
        (m) => (m.payload as { correlation_id: string }).correlation_id,
      );
    expect({
      jira: { single: await jira(single('tickets'), 100), digests: await jira(digestSet('tickets'), 2) },
      servicenow: {
        single: await servicenow(single('incidents'), 100),
        digests: await servicenow(digestSet('incidents'), 2),
      },
    }).toEqual(GOLDEN.tickets);
  });
});
