/**
 * The events worker does what a request from Slack left for after its answer (on AWS the API hands
 * it over by the events queue): a lookup answered at its `response_url` (a real local receiver),
 * and a click's action finished, with its follow-ups sent in the same invocation.
 */
import { describe, expect, it } from 'vitest';
import { createWorkerHandler } from '../../functions/worker.ts';
import { recordAction } from '../../lib/actions/events.ts';
import type { SlackWork } from '../../lib/actions/slack-work.ts';
import { systemClock } from '../../lib/clock.ts';
import { REPEAT_VICTIM } from '../../lib/emulator/dataset.ts';
import { ActionStore } from '../../lib/state/actions.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { useReceivers } from '../helpers/receiver.ts';
import { context, lambdaVariables, sqsRecord, withEnvironment } from './lambda.ts';

const emu = useEmulator({ eventsPerTenant: 3, lateMatchesPerTenant: 0, credentials: 400 });
const db = useDynalite();
const receivers = useReceivers();

describe('the events worker and Slack work', () => {
  it('answers a lookup at response_url, and finishes a click with its follow-ups sent at once', async () => {
    const hook = await receivers();
    const answers = await receivers();
    const table = await db.table();
    const vars = await lambdaVariables({
      apiUrl: emu.url,
      dynamodbEndpoint: db.endpoint,
      table,
      config: {
        sources: { tenantEvents: { enabled: true, lookback: 'P30D' } },
        destinations: { siem: { type: 'webhook', url: hook.url, followUps: true } },
        routes: [{ name: 'all', to: ['siem'] }],
        actions: {
          slack: {
            signingSecret: { secret: 'slackSigning' },
            teamId: 'T0TEAM01',
            allowedUsers: ['U0ANA001'],
            responseUrlPrefix: `${answers.url}/`,
          },
        },
        upstream: { requestsPerSecond: 100, searchRequestsPerSecond: 50 },
      },
    });
    const uid = (emu.running.emulator.dataset.tenant('acme').events[0]?.item.metadata.uid ?? '') as string;
    await withEnvironment(vars, async () => {
      const handler = await createWorkerHandler('events');
      // The events are alerted first, by a stream message.
      await handler({ Records: [sqsRecord({ kind: 'events', stream: 'tenant' })] }, context());
      const before = hook.requests.length;
      // What the API did before Slack's answer: the click written down; then its hand-off.
      const request = {
        type: 'ignore' as const,
        uids: [uid],
        by: 'slack:U0ANA001',
        id: 'slack:T0TEAM01:U0ANA001:1.2',
      };
      await recordAction(
        {
          actions: new ActionStore({ client: db.client, tableName: table, clock: systemClock }),
          clock: systemClock,
        },
        request,
      );
      const work: SlackWork[] = [
        { kind: 'slack-lookup', query: { account: [REPEAT_VICTIM] }, responseUrl: `${answers.url}/c/1` },
        { kind: 'slack-action', request, responseUrl: `${answers.url}/a/1` },
      ];
      const response = await handler({ Records: work.map((w) => sqsRecord(w)) }, context());
      expect(response).toEqual({ batchItemFailures: [] });
      const looked = answers.requests[0]?.json() as { response_type: string; text: string };
      expect(looked.response_type).toBe('ephemeral');
      expect(looked.text).toContain(REPEAT_VICTIM);
      expect(emu.running.emulator.dataset.tenant('acme').events[0]?.isIgnored).toBe(true);
      // The follow-up went in this invocation: the webhook's signed action body.
      const actions = hook.requests
        .slice(before)
        .map((r) => r.json() as { kind: string; action?: { by: string } });
      expect(actions.filter((b) => b.kind === 'action').map((b) => b.action?.by)).toEqual(['slack:U0ANA001']);
    });
  }, 30_000);
});
