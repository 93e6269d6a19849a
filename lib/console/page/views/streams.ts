/**
 * Streams (from `GET /status`): how far behind each stream is, how its last poll went, the
 * global-search quota, and, with identity, each provider's state. A client bound to tenants gets
 * its tenants' streams alone, without the quota and the silences count, which mix tenants.
 */
import { explain } from '../api.ts';
import { duration, errorLine, fill, h, heading, loading, settle, table, when } from '../dom.ts';
import type { Status, View } from '../types.ts';
import { knownStatus } from './words.ts';

export async function streamsView(v: View): Promise<void> {
  const results = loading('Loading streams…');
  fill(v.root, heading('Streams'), results);
  let status: Status;
  try {
    status = await knownStatus(true);
  } catch (error) {
    settle(results, errorLine(`The status could not be loaded. ${explain(error)}`));
    return;
  }
  const { quota, silences } = status;
  settle(
    results,
    quota === undefined && silences === undefined
      ? null
      : h(
          'dl',
          { class: 'summary' },
          h('dt', {}, 'Search quota'),
          h(
            'dd',
            {},
            quota ? [`${quota.remaining} global searches left, read `, when(quota.at)] : 'not read yet',
          ),
          h('dt', {}, 'Active silences'),
          h('dd', {}, silences === undefined ? '—' : String(silences)),
        ),
    table(
      'Streams',
      ['Stream', 'Tenant', 'Last polled', 'Lag', 'Last result'],
      status.streams.map((s) => [
        h('code', {}, s.stream),
        s.tenant ? s.tenant.name : 'top level',
        when(s.lastPolledAt),
        s.lagSeconds === null ? '—' : duration(s.lagSeconds),
        s.lastResult ?? '—',
      ]),
      'No stream has been polled yet.',
    ),
    status.identityProviders?.length
      ? table(
          'Identity providers',
          ['Provider', 'Type', 'Tenant', 'Last lookup', 'State'],
          status.identityProviders.map((p) => [
            p.provider,
            p.type,
            p.tenant ? p.tenant.name : 'top level',
            when(p.lastLookupAt),
            p.refusing
              ? [h('span', { class: 'badge state-dead' }, 'refusing'), ` ${p.refusedMessage ?? ''}`]
              : 'answering',
          ]),
          '',
        )
      : null,
  );
}
