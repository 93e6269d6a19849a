/**
 * Alerts: the newest items first, filtered by kind, severity, tenant, destination, state and text
 * (`GET /alerts`), a page of at most 50 at a time. The filters and the page's cursor live in the
 * address (`#/alerts?kind=event&state=dead`), so Back returns to the page before.
 *
 * The tenant filter is a choice among the tenants the client may see: its own when it is bound to
 * tenants, named as `GET /status` names their streams (which lists a bound client's streams only),
 * or every tenant the status knows when it is bound to none.
 */
import { explain, get, query } from '../api.ts';
import {
  errorLine,
  field,
  fill,
  h,
  heading,
  loading,
  select,
  settle,
  statusLine,
  table,
  when,
} from '../dom.ts';
import type { Status, Tenant, View } from '../types.ts';
import { type AlertPage, DELIVERY_STATES } from '../types.ts';
import { deliveryList, knownStatus, SEVERITIES, severityBadge, verdictText } from './words.ts';

const FILTERS = ['kind', 'severity', 'tenant', 'destination', 'state', 'q'] as const;

export function alertHref(key: string): string {
  return `#/alerts/${encodeURIComponent(key)}`;
}

/** The tenants the filter offers, by name: the client's own, or all the status knows when it is bound to none. */
export function tenantChoices(v: View, status: Status | undefined): Tenant[] {
  const named = new Map<number, string>();
  for (const s of status?.streams ?? []) if (s.tenant) named.set(s.tenant.id, s.tenant.name);
  // A bound client's own tenants come from its grants, so one whose streams have not run yet is a
  // choice too, and a stream of another tenant (were the API ever to list one) is not.
  const ids = v.tenants ? [...v.tenants] : [...named.keys()];
  return ids
    .map((id) => ({ id, name: named.get(id) ?? `tenant ${id}` }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** The tenant select: `current` (an id or a name from the address) stays chosen, as itself when no choice is it. */
function fillTenants(control: HTMLSelectElement, tenants: Tenant[], current: string): void {
  const wanted = current.trim().toLowerCase();
  const chosen = tenants.find((t) => String(t.id) === wanted || t.name.toLowerCase() === wanted);
  control.replaceChildren(
    h('option', { value: '' }, 'Any tenant'),
    ...tenants.map((t) => h('option', { value: String(t.id), selected: t === chosen }, t.name)),
    ...(current && !chosen ? [h('option', { value: current, selected: true }, current)] : []),
  );
}

export async function alertsView(v: View): Promise<void> {
  const p = v.params;
  const value = (name: string) => p.get(name) ?? '';
  // Read while the alerts are: the filters' choices (the list works without them).
  const status = knownStatus().catch(() => undefined);
  const current = value('destination');
  const destination = select(
    'destination',
    [['', 'Any destination'], ...(current ? [[current, current] as [string, string]] : [])],
    current,
  );
  const tenant = select('tenant', [['', 'Any tenant']]);
  fillTenants(tenant, [], value('tenant'));
  const tenantField = field('Tenant', tenant);
  const form = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Filter alerts' },
    field(
      'Kind',
      select(
        'kind',
        [
          ['', 'Any kind'],
          ['event', 'Event'],
          ['credential', 'Credential'],
        ],
        value('kind'),
      ),
    ),
    field(
      'Severity',
      select(
        'severity',
        [['', 'Any severity'], ...SEVERITIES.map((s) => [s, s] as [string, string])],
        value('severity'),
      ),
    ),
    tenantField,
    field('Destination', destination),
    field(
      'State',
      select(
        'state',
        [['', 'Any state'], ...DELIVERY_STATES.map((s) => [s, s] as [string, string])],
        value('state'),
      ),
      'of any of its deliveries',
    ),
    field(
      'Text',
      h('input', { type: 'search', name: 'q', value: value('q'), autocomplete: 'off' }),
      'title, login or uid',
    ),
    h(
      'div',
      { class: 'buttons' },
      h('button', { type: 'submit', class: 'primary' }, 'Apply filters'),
      h('a', { href: '#/alerts', class: 'button' }, 'Clear'),
    ),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const values: Record<string, string> = {};
    for (const name of FILTERS) values[name] = String(data.get(name) ?? '').trim();
    location.hash = `#/alerts${query(values)}`;
  });
  const results = loading('Loading alerts…');
  fill(v.root, heading('Alerts'), form, results);

  const asked: Record<string, string> = {};
  for (const name of [...FILTERS, 'cursor']) asked[name] = value(name);
  let page: AlertPage | undefined;
  let failed: unknown;
  try {
    page = await get<AlertPage>(`alerts${query(asked)}`);
  } catch (error) {
    failed = error;
  }
  // The choices are in place before the view says it has loaded. A bound client's status has no
  // destinations (their queues mix tenants): its destination filter offers what the address names.
  const known = await status;
  for (const d of known?.destinations ?? [])
    if (d.destination !== current) destination.append(h('option', { value: d.destination }, d.destination));
  const tenants = tenantChoices(v, known);
  fillTenants(tenant, tenants, value('tenant'));
  // Without tenants to choose (a deployment without them), the filter would offer nothing.
  tenantField.hidden = tenants.length === 0 && !value('tenant');
  if (!page) {
    settle(results, errorLine(`The alerts could not be loaded. ${explain(failed)}`));
    return;
  }
  const filtered = FILTERS.some((f) => value(f));
  const rows = page.items.map((a) => [
    a.kind,
    severityBadge(a.severity),
    h('a', { href: alertHref(a.key) }, a.title || a.key),
    a.tenant ? a.tenant.name : '—',
    when(a.matchedAt),
    verdictText(a.identity),
    deliveryList(a.deliveries),
  ]);
  const next = page.cursor ? `#/alerts${query({ ...asked, cursor: page.cursor })}` : undefined;
  settle(
    results,
    statusLine(
      page.items.length === 0
        ? filtered
          ? 'No alerts match these filters.'
          : 'No alerts yet.'
        : `${page.items.length} alert${page.items.length === 1 ? '' : 's'} on this page, newest recorded first${value('cursor') ? ' (an older page)' : ''}.`,
    ),
    table(
      'Alerts, newest recorded first',
      ['Kind', 'Severity', 'Title or login', 'Tenant', 'Matched', 'Identity', 'Deliveries'],
      rows,
      '',
    ),
    h(
      'nav',
      { class: 'pager', 'aria-label': 'Pages of alerts' },
      value('cursor') ? h('a', { href: `#/alerts${query({ ...asked, cursor: '' })}` }, 'Newest page') : null,
      next ? h('a', { href: next, rel: 'next' }, 'Older alerts') : null,
    ),
  );
}
