/**
 * Destinations (from `GET /status`): what waits, what died, who refuses; a test message
 * (`POST /destinations/{name}/test`, one a minute each: a PagerDuty test pages someone) and
 * re-queueing the dead (`POST /deliveries/retry`), for a token with `destinations:write` bound to
 * no tenant. A client bound to tenants is told why it sees none: every tenant's deliveries share a
 * destination's queue, so the API leaves the counts out for it.
 */
import { call, explain, idempotencyKey, segment } from '../api.ts';
import { confirmChange } from '../confirm.ts';
import { type Child, errorLine, fill, h, heading, loading, settle, statusLine, table } from '../dom.ts';
import type { DestinationLine, View } from '../types.ts';
import { knownStatus } from './words.ts';

const count = (n: number, more?: boolean) => `${n}${more ? '+' : ''}`;

export async function destinationsView(v: View, notice?: Child): Promise<void> {
  const reload = (said: Child) => {
    void destinationsView(v, said).then(() =>
      (v.root.querySelector('.notice') as HTMLElement | null)?.focus(),
    );
  };
  const results = loading('Loading destinations…');
  fill(
    v.root,
    heading('Destinations'),
    notice ? h('div', { class: 'notice', tabindex: -1 }, notice) : null,
    results,
  );
  let lines: DestinationLine[] | undefined;
  try {
    lines = (await knownStatus(true)).destinations;
  } catch (error) {
    settle(results, errorLine(`The destinations could not be loaded. ${explain(error)}`));
    return;
  }
  if (!lines) {
    settle(
      results,
      statusLine(
        v.tenants
          ? `The client "${v.who.name}" is bound to tenants, and every tenant's deliveries share a destination's queue, so the API shows it no destination counts. Each alert's deliveries are in its detail.`
          : 'The API sent no destination counts.',
      ),
    );
    return;
  }
  const said = h('div', { class: 'said', 'aria-live': 'polite' });
  const test = async (name: string) => {
    const ok = await confirmChange({
      title: `Send a test message to ${name}?`,
      body: [
        h(
          'p',
          {},
          'It is sent now. A PagerDuty destination pages whoever is on call; one test a minute per destination.',
        ),
      ],
      confirm: 'Send the test',
    });
    if (!ok) return;
    fill(said, statusLine(`Sending a test message to ${name}…`));
    try {
      const answer = await call<{ result: string; detail?: string }>(
        'POST',
        `destinations/${segment(name)}/test`,
        {
          body: {},
          key: idempotencyKey(),
        },
      );
      const { result, detail } = answer.body;
      const line = `Test message to ${name}: ${result}${detail ? ` (${detail})` : ''}.`;
      fill(said, result === 'sent' ? statusLine(line) : errorLine(line));
    } catch (error) {
      fill(said, errorLine(`Test message to ${name}: ${explain(error, 'destinations:write')}`));
    }
  };
  const requeue = async (line: DestinationLine) => {
    const ok = await confirmChange({
      title: `Re-queue the dead deliveries of ${line.destination}?`,
      body: [
        h('p', {}, `${count(line.dead, line.deadMore)} dead: each goes again with the next delivery pass.`),
      ],
      confirm: 'Re-queue them',
    });
    if (!ok) return;
    try {
      const answer = await call<{ requeued: number; skipped: number }>('POST', 'deliveries/retry', {
        body: { destination: line.destination, status: 'dead' },
        key: idempotencyKey(),
      });
      reload(
        statusLine(
          `${line.destination}: re-queued ${answer.body.requeued}, left ${answer.body.skipped} alone.`,
        ),
      );
    } catch (error) {
      fill(said, errorLine(explain(error, 'destinations:write')));
    }
  };
  const write = v.can('destinations:write');
  settle(
    results,
    table(
      'Destinations',
      ['Destination', 'Pending', 'Dead', 'Refusing', ...(write ? [''] : [])],
      lines.map((d) => [
        d.destination,
        count(d.pending, d.pendingMore),
        count(d.dead, d.deadMore),
        d.refusing ? h('span', { class: 'badge state-dead' }, 'refusing') : 'no',
        ...(write
          ? [
              h(
                'div',
                { class: 'buttons' },
                h(
                  'button',
                  {
                    type: 'button',
                    'aria-label': `Send a test message to ${d.destination}`,
                    onclick: () => void test(d.destination),
                  },
                  'Test',
                ),
                d.dead > 0
                  ? h(
                      'button',
                      {
                        type: 'button',
                        'aria-label': `Re-queue the dead deliveries of ${d.destination}`,
                        onclick: () => void requeue(d),
                      },
                      'Re-queue dead',
                    )
                  : null,
              ),
            ]
          : []),
      ]),
      'No destination is known yet: the pollers list them once they run.',
    ),
    said,
  );
}
