/**
 * One alert (`GET /alerts/{key}`): what it is, where it went (each delivery's attempts and last
 * error), what was done about it (its actions and audit trail), the item itself as the password
 * policy left it (as JSON text), and what this token may do about it (act.ts).
 */
import { call, explain, get, idempotencyKey, segment } from '../api.ts';
import { confirmChange } from '../confirm.ts';
import { type Child, errorLine, fill, h, heading, statusLine, table, text, when } from '../dom.ts';
import type { AlertDetail, Delivery, View } from '../types.ts';
import { actSection } from './act.ts';
import { severityBadge, stateOf, verdictText } from './words.ts';

type Item = Record<string, unknown>;
const obj = (v: unknown): Item => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Item) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

/** A heading for the item: an event's type and uid, a credential's login. */
function titleOf(d: AlertDetail): string {
  const meta = obj(d.item.metadata);
  if (d.kind === 'credential') return str(d.item.identity_name) ?? d.key;
  return [str(meta.type), str(meta.uid)].filter(Boolean).join(' ') || d.key;
}

function severityOf(item: Item): string | undefined {
  return str(obj(obj(item.tenant_metadata).severity).override) ?? str(obj(item.metadata).severity);
}

function matchedOf(d: AlertDetail): string | undefined {
  return d.kind === 'credential' ? str(d.item.imported_at) : str(obj(d.item.metadata).matched_at);
}

function summary(d: AlertDetail): HTMLElement {
  const rows: [string, Child][] = [
    ['Key', h('code', {}, d.key)],
    ['Kind', d.kind],
    ['Severity', severityBadge(severityOf(d.item))],
    ['Tenant', d.tenant ? `${d.tenant.name} (${d.tenant.id})` : 'top-level sources'],
    ['Matched', when(matchedOf(d))],
  ];
  if (d.identity) {
    const i = d.identity;
    rows.push(['Identity', verdictText(i)]);
    if (i.displayName) rows.push(['Account', i.displayName]);
    if (i.enabled !== undefined) rows.push(['Can sign in', i.enabled ? 'yes' : 'no']);
    rows.push(['Password changed', when(i.passwordChangedAt)]);
    if (i.leakDate) rows.push(['Leaked', when(i.leakDate)]);
  }
  return h(
    'dl',
    { class: 'summary' },
    rows.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
  );
}

function deliveries(v: View, d: AlertDetail, reload: (notice: Child) => void): HTMLElement {
  const said = h('div', { class: 'said' });
  const requeue = async (delivery: Delivery) => {
    const ok = await confirmChange({
      title: 'Re-queue this delivery?',
      body: [h('p', {}, `It goes to ${delivery.destination} again with the next delivery pass.`)],
      confirm: 'Re-queue',
    });
    if (!ok) return;
    try {
      const answer = await call<{ requeued: number; skipped: number }>('POST', 'deliveries/retry', {
        body: { ids: [delivery.id] },
        key: idempotencyKey(),
      });
      reload(statusLine(`Re-queued ${answer.body.requeued}, left ${answer.body.skipped} alone.`));
    } catch (error) {
      fill(said, errorLine(explain(error, 'destinations:write')));
    }
  };
  const rows = d.deliveries.map((x) => [
    x.destination,
    h('span', { class: `badge state-${stateOf(x)}` }, stateOf(x)),
    String(x.attempts),
    x.lastError ?? '—',
    x.sentAt ? when(x.sentAt) : '—',
    stateOf(x) === 'dead' && v.can('destinations:write')
      ? h('button', { type: 'button', onclick: () => void requeue(x) }, `Re-queue for ${x.destination}`)
      : '',
  ]);
  return h(
    'section',
    { 'aria-labelledby': 'deliveries-title' },
    h('h3', { id: 'deliveries-title' }, 'Deliveries'),
    table(
      'Where it went',
      ['Destination', 'State', 'Attempts', 'Last error', 'Sent', ''],
      rows,
      'It was not sent anywhere (routed nowhere).',
    ),
    said,
  );
}

export async function alertView(v: View, notice?: Child): Promise<void> {
  const key = v.path.join('/');
  const back = h('p', { class: 'back' }, h('a', { href: '#/alerts' }, '← All alerts'));
  fill(v.root, back, heading('Alert'), statusLine('Loading the alert…'));
  v.root.setAttribute('aria-busy', 'true');
  let d: AlertDetail;
  try {
    d = await get<AlertDetail>(`alerts/${segment(key)}`);
  } catch (error) {
    v.root.removeAttribute('aria-busy');
    const gone = (error as { status?: number }).status === 404;
    fill(
      v.root,
      back,
      heading('Alert'),
      errorLine(
        gone
          ? `No alert has the key ${key}: it may be older than the delivery records (90 days).`
          : `The alert could not be loaded. ${explain(error)}`,
      ),
    );
    return;
  }
  v.root.removeAttribute('aria-busy');
  const reload = (said: Child) => {
    void alertView(v, said).then(() => (v.root.querySelector('.notice') as HTMLElement | null)?.focus());
  };
  fill(
    v.root,
    back,
    heading(titleOf(d)),
    notice ? h('div', { class: 'notice', tabindex: -1 }, notice) : null,
    summary(d),
    actSection(v, d, reload),
    deliveries(v, d, reload),
    h(
      'section',
      { 'aria-labelledby': 'actions-title' },
      h('h3', { id: 'actions-title' }, 'Actions'),
      table(
        'What was done',
        ['When', 'Action', 'By', 'Result'],
        d.actions.map((a) => [when(a.at), a.type, a.by, text(a.result)]),
        'No action was taken on it.',
      ),
    ),
    h(
      'section',
      { 'aria-labelledby': 'audit-title' },
      h('h3', { id: 'audit-title' }, 'Audit trail'),
      table(
        'Who did what',
        ['When', 'Who', 'What', 'Target', 'Result'],
        d.audit.map((a) => [when(a.at), a.who, a.what, text(a.target), text(a.result)]),
        'Nothing in its audit trail.',
      ),
    ),
    h(
      'section',
      { 'aria-labelledby': 'item-title' },
      h('h3', { id: 'item-title' }, 'The item'),
      h('p', {}, 'As stored, the password as the password policy left it.'),
      h(
        'pre',
        { class: 'json', tabindex: 0, 'aria-label': 'The item as JSON' },
        JSON.stringify(d.item, null, 2),
      ),
    ),
  );
}
