/** Audit (`GET /audit`): the latest entries of the audit trail, newest first, a page at a time. */
import { explain, get, query } from '../api.ts';
import { errorLine, fill, h, heading, loading, settle, table, text, when } from '../dom.ts';
import type { AuditPage, View } from '../types.ts';

export async function auditView(v: View): Promise<void> {
  const cursor = v.params.get('cursor') ?? '';
  const results = loading('Loading the audit trail…');
  fill(v.root, heading('Audit'), results);
  let page: AuditPage;
  try {
    page = await get<AuditPage>(`audit${query({ cursor })}`);
  } catch (error) {
    settle(results, errorLine(`The audit trail could not be loaded. ${explain(error)}`));
    return;
  }
  settle(
    results,
    table(
      'Audit trail, newest first',
      ['When', 'Who', 'What', 'Target', 'Result'],
      page.items.map((a) => [when(a.at), a.who, a.what, text(a.target), text(a.result)]),
      cursor ? 'No older entries.' : 'Nothing in the audit trail yet.',
    ),
    h(
      'nav',
      { class: 'pager', 'aria-label': 'Pages of the audit trail' },
      cursor ? h('a', { href: '#/audit' }, 'Newest entries') : null,
      page.cursor
        ? h('a', { href: `#/audit${query({ cursor: page.cursor })}`, rel: 'next' }, 'Older entries')
        : null,
    ),
  );
}
