/**
 * Alerts: the newest items first, filtered by kind, severity, tenant, destination, state and text
 * (`GET /alerts`), a page of at most 50 at a time. The filters and the page's cursor live in the
 * address (`#/alerts?kind=event&state=dead`), so Back returns to the page before.
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
import type { View } from '../types.ts';
import { type AlertPage, DELIVERY_STATES } from '../types.ts';
import { deliveryList, knownStatus, SEVERITIES, severityBadge, verdictText } from './words.ts';

const FILTERS = ['kind', 'severity', 'tenant', 'destination', 'state', 'q'] as const;

export function alertHref(key: string): string {
  return `#/alerts/${encodeURIComponent(key)}`;
}

export async function alertsView(v: View): Promise<void> {
  const p = v.params;
  const value = (name: string) => p.get(name) ?? '';
  const current = value('destination');
  const destination = select(
    'destination',
    [['', 'Any destination'], ...(current ? [[current, current] as [string, string]] : [])],
    current,
  );
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
    field(
      'Tenant',
      h('input', { name: 'tenant', value: value('tenant'), autocomplete: 'off' }),
      'id or name',
    ),
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

  // The destinations the status knows, as the filter's choices (the list works without them).
  void knownStatus()
    .then((status) => {
      for (const d of status.destinations)
        if (d.destination !== current)
          destination.append(h('option', { value: d.destination }, d.destination));
    })
    .catch(() => undefined);

  const asked: Record<string, string> = {};
  for (const name of [...FILTERS, 'cursor']) asked[name] = value(name);
  let page: AlertPage;
  try {
    page = await get<AlertPage>(`alerts${query(asked)}`);
  } catch (error) {
    settle(results, errorLine(`The alerts could not be loaded. ${explain(error)}`));
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
