/**
 * Silences (docs/runbook.md): the active ones (or every one), a form that makes one, and
 * Expire on each active one. A new silence is counted first (`POST /silences?dryRun=true`), and the
 * confirmation says how many of the recent alerts it would have held, so a matcher that is too
 * broad shows before it holds anything back.
 */
import { call, explain, get, idempotencyKey, segment } from '../api.ts';
import { confirmChange } from '../confirm.ts';
import {
  type Child,
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
import { type Silence, VERDICTS } from '../types.ts';
import { countHeld, SEVERITIES } from './words.ts';

const list = (value: string) =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
/** Numbers stay numbers (identifier and tenant ids), names stay text. */
const idsOrNames = (value: string) => list(value).map((s) => (/^\d+$/.test(s) ? Number(s) : s));

/** The matcher the form describes, in section 3's route `match` shape. */
export function matchOf(form: HTMLFormElement): Record<string, unknown> {
  const data = new FormData(form);
  const v = (name: string) => String(data.get(name) ?? '').trim();
  const match: Record<string, unknown> = {};
  if (v('kind')) match.kind = v('kind');
  if (list(v('types')).length) match.types = list(v('types'));
  if (v('severity')) match.severity = { gte: v('severity') };
  if (idsOrNames(v('identifiers')).length) match.identifiers = idsOrNames(v('identifiers'));
  if (list(v('domains')).length) match.domains = list(v('domains'));
  if (idsOrNames(v('tenants')).length) match.tenants = idsOrNames(v('tenants'));
  if (list(v('tags')).length) match.tags = { any: list(v('tags')) };
  const verdicts = data.getAll('identity').map(String);
  if (verdicts.length) match.identity = verdicts;
  return match;
}

function createForm(reload: (notice: Child) => void): HTMLElement {
  const said = h('div', { class: 'said' });
  const preview = h('code', { id: 'match-preview' }, '{}');
  const form = h(
    'form',
    { class: 'create', novalidate: true },
    h(
      'fieldset',
      {},
      h('legend', {}, 'What it holds back (every field given must hold; none given holds everything)'),
      field(
        'Kind',
        select('kind', [
          ['', 'Any kind'],
          ['event', 'Event'],
          ['credential', 'Credential'],
        ]),
      ),
      field(
        'Event types',
        h('input', { name: 'types', autocomplete: 'off' }),
        'comma-separated: paste, forum_post, illicit_networks',
      ),
      field(
        'Severity at least',
        select('severity', [['', 'Any severity'], ...SEVERITIES.map((s) => [s, s] as [string, string])]),
      ),
      field(
        'Identifiers',
        h('input', { name: 'identifiers', autocomplete: 'off' }),
        'ids or names, comma-separated',
      ),
      field(
        'Domains',
        h('input', { name: 'domains', autocomplete: 'off' }),
        'a credential’s domain or a parent of it',
      ),
      field('Tenants', h('input', { name: 'tenants', autocomplete: 'off' }), 'ids or names'),
      field('Tags, any of', h('input', { name: 'tags', autocomplete: 'off' })),
      h(
        'fieldset',
        { class: 'checks' },
        h('legend', {}, 'Identity verdicts'),
        VERDICTS.map((verdict) =>
          h(
            'label',
            {},
            h('input', { type: 'checkbox', name: 'identity', value: verdict }),
            ` ${verdict.replace('_', ' ')}`,
          ),
        ),
      ),
    ),
    field(
      'Until',
      h('input', { name: 'until', value: '4h', required: true, autocomplete: 'off' }),
      'a duration (30m, 4h, 1d, 1w, PT4H) or a timestamp, at most 366 days away',
    ),
    field(
      'Reason',
      h('input', { name: 'reason', required: true, maxlength: 500, autocomplete: 'off' }),
      'why, for whoever reads the list later',
    ),
    h('p', {}, 'Match: ', preview),
    h('div', { class: 'buttons' }, h('button', { type: 'submit', class: 'primary' }, 'Create silence…')),
    said,
  );
  form.addEventListener('input', () => {
    preview.textContent = JSON.stringify(matchOf(form));
  });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const body = {
      match: matchOf(form),
      until: String(data.get('until') ?? '').trim(),
      reason: String(data.get('reason') ?? '').trim(),
    };
    if (!body.until || !body.reason) {
      fill(said, errorLine(!body.until ? 'Say until when (4h, 1d, a timestamp).' : 'Give a reason.'));
      return;
    }
    fill(said, statusLine('Counting what it would hold…'));
    try {
      const dry = await countHeld(body);
      fill(said);
      const everything = Object.keys(body.match).length === 0;
      const ok = await confirmChange({
        title: 'Create this silence?',
        body: [
          h('p', {}, 'Match: ', h('code', {}, JSON.stringify(body.match)), `, until ${body.until}.`),
          everything ? h('p', { class: 'error' }, 'An empty match holds back every alert.') : null,
          h('p', { class: 'would-hold' }, `It would have held ${dry.wouldHold} of ${dry.of} recent alerts.`),
        ],
        confirm: 'Create the silence',
      });
      if (!ok) return;
      const made = (
        await call<{ silence: Silence; warnings: string[] }>('POST', 'silences', {
          body,
          key: idempotencyKey(),
        })
      ).body;
      reload(
        statusLine(
          `Created ${made.silence.id}, until ${made.silence.until}.`,
          made.warnings.length ? ` Warnings: ${made.warnings.join(' ')}` : '',
        ),
      );
    } catch (error) {
      fill(said, errorLine(explain(error, 'silences:write')));
    }
  });
  return h(
    'section',
    { 'aria-labelledby': 'create-title' },
    h('h3', { id: 'create-title' }, 'New silence'),
    form,
  );
}

export async function silencesView(v: View, notice?: Child): Promise<void> {
  const all = v.params.get('all') === 'true';
  const reload = (said: Child) => {
    void silencesView(v, said).then(() => (v.root.querySelector('.notice') as HTMLElement | null)?.focus());
  };
  const listing = loading('Loading silences…');
  fill(
    v.root,
    heading('Silences'),
    notice ? h('div', { class: 'notice', tabindex: -1 }, notice) : null,
    h(
      'p',
      {},
      all
        ? h('a', { href: '#/silences' }, 'Show the active ones only')
        : h('a', { href: '#/silences?all=true' }, 'Show expired ones too'),
    ),
    listing,
    v.can('silences:write') ? createForm(reload) : null,
  );
  let items: Silence[];
  try {
    items = (await get<{ items: Silence[] }>(`silences${all ? '?all=true' : ''}`)).items;
  } catch (error) {
    settle(listing, errorLine(`The silences could not be loaded. ${explain(error)}`));
    return;
  }
  const said = h('div', { class: 'said' });
  const expire = async (s: Silence) => {
    const ok = await confirmChange({
      title: 'Expire this silence?',
      body: [
        h('p', {}, 'Match: ', h('code', {}, JSON.stringify(s.match)), '.'),
        h('p', {}, 'What it holds is sent from the next poll; what it already held stays unsent.'),
      ],
      confirm: 'Expire it',
    });
    if (!ok) return;
    try {
      const done = (await call<{ silence: Silence }>('DELETE', `silences/${segment(s.id)}`)).body;
      reload(statusLine(`Expired ${done.silence.id}.`));
    } catch (error) {
      fill(said, errorLine(explain(error, 'silences:write')));
    }
  };
  settle(
    listing,
    table(
      all ? 'Every silence' : 'Active silences',
      ['Id', 'Match', 'Until', 'Reason', 'By', 'Created', all ? 'Expired' : '', ''],
      items.map((s) => [
        h('code', {}, s.id),
        h('code', {}, JSON.stringify(s.match)),
        when(s.until),
        s.reason,
        s.createdBy,
        when(s.createdAt),
        all ? (s.expiredAt ? [when(s.expiredAt), s.expiredBy ? ` by ${s.expiredBy}` : ''] : 'active') : '',
        !s.expiredAt && v.can('silences:write')
          ? h(
              'button',
              { type: 'button', 'aria-label': `Expire ${s.id}`, onclick: () => void expire(s) },
              'Expire',
            )
          : '',
      ]),
      all ? 'No silence was ever made here.' : 'No silence is active.',
    ),
    said,
  );
}
