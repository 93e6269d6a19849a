/**
 * 5. Delivery: 1,000 new events routed to one Slack, one webhook, one Teams and one PagerDuty
 * receiver (all real local HTTP servers in this process), with the product's default digest
 * settings. One real `events` poll cycle on a fresh table, against the emulator with 10 ms added
 * to every request. Reported: the messages each received (Slack, Teams and PagerDuty get digests),
 * the time from the start of the cycle until every delivery is recorded sent, and the most
 * messages that arrived within any one second (Slack, Teams: at most one a second per URL) or any
 * one minute (PagerDuty: at most 120 a minute per routing key), by the receiver's own clock.
 */

import { POLLER_MEMORY_MB } from '../../infra/function.ts';
import type { DrainRun, DrainSetup } from './drain.ts';
import { measureSiem } from './measure-siem.ts';
import { measureTickets } from './measure-tickets.ts';
import {
  createTable,
  startDynaliteProcess,
  startEmulatorProcess,
  startWorker,
  type Worker,
} from './procs.ts';
import { startBenchReceiver } from './receiver.ts';
import { type Figure, figure } from './report.ts';
import { round } from './stats.ts';

const EVENTS = 1_000;

export async function measureDelivery(): Promise<{ figures: Figure[]; raw: unknown }> {
  const db = await startDynaliteProcess();
  // No late matches, so the feed holds exactly the 1,000 events this section counts and compares.
  const emu = await startEmulatorProcess({ events: EVENTS, lateMatches: 0, credentials: 0, latencyMs: 10 });
  const slack = await startBenchReceiver('slack');
  const hook = await startBenchReceiver('webhook');
  const teams = await startBenchReceiver('teams');
  const pager = await startBenchReceiver('pagerduty');
  let worker: Worker | undefined;
  try {
    const setup: DrainSetup = {
      apiUrl: emu.url,
      token: emu.token,
      dynamoEndpoint: db.url,
      destinations: {
        soc: { type: 'slack', url: slack.url },
        siem: { type: 'webhook', url: hook.url },
        socTeams: { type: 'teams', url: teams.url },
        oncall: { type: 'pagerduty', url: pager.url, routingKey: 'R0ut1ngKeyForTheBenchOnly0123456' },
      },
      domain: 'acme.test',
      eventsLookback: 'P4D',
      credentialsLookback: 'P1D',
    };
    worker = await startWorker('drain', setup, { memorySize: POLLER_MEMORY_MB });
    const table = await createTable(db.url, 'delivery');
    const started = Date.now();
    const run = await worker.request<DrainRun>({ type: 'product', table, kinds: ['events'] });
    const cycle = run.kinds[0];
    const sentTo = (name: string) => cycle?.destinations.find((d) => d.destination === name)?.sent;
    const names = ['soc', 'siem', 'socTeams', 'oncall'];
    if (cycle?.exitCode !== 0 || names.some((name) => sentTo(name) !== EVENTS)) {
      throw new Error(
        `delivery: expected ${EVENTS} events sent to each destination, got ${JSON.stringify(cycle)}`,
      );
    }
    if (hook.keys.size !== EVENTS || hook.duplicates() > 0) {
      throw new Error(
        `delivery: the webhook got ${hook.keys.size} distinct events, ${hook.duplicates()} twice`,
      );
    }
    const lastSlack = Math.max(...slack.arrivals.map((a) => a.at));
    const tickets = await measureTickets();
    const siem = await measureSiem();
    return {
      figures: [
        ...tickets.figures,
        ...siem.figures,
        figure({
          section: 'delivery',
          id: 'delivery.slackMessages',
          label: '1,000 events: Slack messages sent (digests)',
          value: slack.arrivals.length,
          unit: '',
        }),
        figure({
          section: 'delivery',
          id: 'delivery.webhookMessages',
          label: '1,000 events: webhook messages sent',
          value: hook.arrivals.length,
          unit: '',
        }),
        figure({
          section: 'delivery',
          id: 'delivery.teamsMessages',
          label: '1,000 events: Teams messages sent (digests)',
          value: teams.arrivals.length,
          unit: '',
        }),
        figure({
          section: 'delivery',
          id: 'delivery.pagerdutyEvents',
          label: '1,000 events: PagerDuty events sent (digests)',
          value: pager.arrivals.length,
          unit: '',
        }),
        figure({
          section: 'delivery',
          id: 'delivery.seconds',
          label: '1,000 events: cycle start to all deliveries recorded sent',
          value: round((cycle?.ms ?? Number.NaN) / 1000),
          unit: 's',
          detail: `last Slack message ${round((lastSlack - started) / 1000)} s after the cycle was started`,
        }),
        figure({
          section: 'delivery',
          id: 'delivery.slackMaxPerSecond',
          label: 'most Slack messages within any 1 s (receiver clock)',
          value: slack.maxInWindow(1_000),
          unit: '',
          budget: { max: 1, holds: 'count' },
        }),
        figure({
          section: 'delivery',
          id: 'delivery.teamsMaxPerSecond',
          label: 'most Teams messages within any 1 s (receiver clock)',
          value: teams.maxInWindow(1_000),
          unit: '',
          budget: { max: 1, holds: 'count' },
        }),
        figure({
          section: 'delivery',
          id: 'delivery.pagerdutyMaxPerMinute',
          label: 'most PagerDuty events within any 60 s (receiver clock)',
          value: pager.maxInWindow(60_000),
          unit: '',
          budget: { max: 120, holds: 'count' },
          detail: `most within any 1 s: ${pager.maxInWindow(1_000)}`,
        }),
      ],
      raw: {
        tickets: tickets.raw,
        siem: siem.raw,
        run,
        slackArrivals: slack.arrivals.map((a) => a.at - started),
        webhookArrivals: { first: (hook.arrivals[0]?.at ?? started) - started, count: hook.arrivals.length },
        teamsArrivals: teams.arrivals.map((a) => a.at - started),
        pagerdutyArrivals: pager.arrivals.map((a) => a.at - started),
      },
    };
  } finally {
    await worker?.stop();
    await pager.close();
    await teams.close();
    await hook.close();
    await slack.close();
    await emu.stop();
    await db.stop();
  }
}
