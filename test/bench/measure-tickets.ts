/**
 * Part of the delivery section: 20 new events to Jira (the stand-in of the tests, a real local HTTP
 * server whose search finds an issue only 2 s after its create, as Jira's index lags), with the
 * run dying between Jira's 201 and our record after every fifth create. Passes run until every
 * event is recorded sent. Reported: the issues that exist (exactly 20: no duplicate, none missing),
 * and the time until all exist, on the product's clock (which waits out the 5 minutes before a
 * create of unknown outcome is searched and tried again) and in real time (that clock skips its
 * waits, so the bench does not sit 5 minutes).
 */

import { runDeliveryPass } from '../../lib/deliver/pass.ts';
import { startEmulator } from '../../lib/emulator/index.ts';
import { runPollCycle } from '../../lib/poll/cycle.ts';
import { createDynamoClient } from '../../lib/state/table.ts';
import { skipClock } from '../helpers/clock.ts';
import { JIRA_EMAIL, JIRA_TOKEN, startJira } from '../helpers/jira.ts';
import { createTable, startDynaliteProcess } from './procs.ts';
import { benchRuntime } from './product.ts';
import { type Figure, figure } from './report.ts';
import { round } from './stats.ts';

const EVENTS = 20;
const CRASH_EVERY = 5;

class Crash extends Error {}

export async function measureTickets(): Promise<{ figures: Figure[]; raw: unknown }> {
  const db = await startDynaliteProcess();
  const emu = await startEmulator({
    seed: 42,
    eventsPerTenant: EVENTS,
    lateMatchesPerTenant: 0,
    credentials: 0,
  });
  const jira = await startJira({ indexDelayMs: 2_000 });
  try {
    const table = await createTable(db.url, 'tickets');
    const clock = skipClock();
    const runtime = await benchRuntime({
      apiUrl: emu.url,
      token: 'emu-acme-token',
      dynamoEndpoint: db.url,
      table,
      dynamo: createDynamoClient({ endpoint: db.url }),
      config: {
        sources: { tenantEvents: { lookback: 'P30D' } },
        destinations: {
          tickets: {
            type: 'jira',
            url: jira.url,
            email: JIRA_EMAIL,
            apiToken: { secret: 'jira' },
            project: 'SEC',
          },
        },
        routes: [{ name: 'all', to: ['tickets'] }],
        digest: { threshold: 1_000, maxItems: 20 },
      },
      secrets: { jira: JIRA_TOKEN },
      clock,
    });
    const events = emu.emulator.dataset.tenant('acme').events.length;
    let accepted = 0;
    let crashes = 0;
    runtime.deliver.checkpoint = () => {
      accepted += 1;
      if (accepted % CRASH_EVERY === 0) {
        crashes += 1;
        throw new Crash('the run dies between the 201 and its record');
      }
    };
    const startedAt = clock.now();
    const realStart = Date.now();
    await runPollCycle(runtime.cycle, 'events', { deadline: clock.now() + 600_000 }).catch(() => undefined);
    for (let pass = 0; pass < 40; pass++) {
      const sent = await runtime.deliveries.list({ status: 'sent', destinations: ['tickets'], limit: 1_000 });
      if (sent.length >= events) break;
      const result = await runDeliveryPass(runtime.deliver, { deadline: clock.now() + 600_000 }).catch(
        () => undefined,
      );
      if (result && result.sent === 0) {
        // Only creates of unknown outcome are left: a minute on the product's clock, and the real
        // time the index needs to catch up.
        await clock.sleep(60_000);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    const sent = await runtime.deliveries.list({ status: 'sent', destinations: ['tickets'], limit: 1_000 });
    const productSeconds = (clock.now() - startedAt) / 1000;
    const realSeconds = (Date.now() - realStart) / 1000;
    const labels = new Set(jira.issues.flatMap((i) => i.labels));
    if (sent.length !== events || jira.issues.length !== events || labels.size !== events)
      throw new Error(
        `tickets: ${sent.length} of ${events} recorded sent, ${jira.issues.length} issues with ${labels.size} labels`,
      );
    return {
      figures: [
        figure({
          section: 'delivery',
          id: 'delivery.jiraIssues',
          label: `${events} events to Jira, a crash after every ${CRASH_EVERY}th create, its index 2 s behind: issues`,
          value: jira.issues.length,
          unit: '',
          budget: { max: events, holds: 'count' },
          detail: `${crashes} crashes; every event recorded sent, each with its own issue`,
        }),
        figure({
          section: 'delivery',
          id: 'delivery.jiraSeconds',
          label: '… until all exist, on the product’s clock',
          value: round(productSeconds),
          unit: 's',
          detail: `a create of unknown outcome waits 5 minutes, then a search; ${round(realSeconds)} s real time (the waits skipped)`,
        }),
      ],
      raw: { events, crashes, productSeconds, realSeconds, calls: jira.calls.length },
    };
  } finally {
    await jira.close();
    await emu.close();
    await db.stop();
  }
}
