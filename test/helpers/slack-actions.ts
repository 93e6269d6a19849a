/**
 * Slack's doors on a polled world, for the tests that click: the API app as the Lambda builds it
 * (createApiDeps) over a world whose `app` destination posts to the Slack Web API stand-in, each
 * request signed as Slack signs it, and the work the doors hand on done in this process as the
 * queue would carry it (JSON), its answers to `response_url` kept by a receiver (`answers`).
 *
 * @example
 * const slack = useSlackActions(emu, db);
 * it('...', async () => {
 *   const { post, interaction, settled } = await slack.setUp({ sources: { tenantEvents: { lookback: 'P30D' } } });
 *   await post('/slack/interactions', interaction({ action_id: 'exposure:ignore', block_id: `exposure:${uid}` }));
 *   await settled();
 * });
 */
import { afterAll, beforeAll } from 'vitest';
import { runSlackWork, type SlackWork } from '../../lib/actions/slack-work.ts';
import { type ApiDeps, createApiApp } from '../../lib/api/app.ts';
import type { ApiClients } from '../../lib/api/auth.ts';
import { type ApiDepsOptions, createApiDeps } from '../../lib/api/deps.ts';
import { readEnvironment } from '../../lib/env.ts';
import { memoryLogger } from '../../lib/log.ts';
import { deliveryId } from '../../lib/state/records/record.ts';
import { skipClock } from './clock.ts';
import type { DynamoFixture } from './dynamo.ts';
import type { EmulatorFixture } from './emulator.ts';
import { type Receiver, useReceivers } from './receiver.ts';
import { SLACK_CHANNEL, type SlackStandIn, slackSigned, startSlackApi } from './slack-api.ts';
import { makeWorld, type World } from './world.ts';

export const SLACK_SECRET = 'slack-signing-secret-for-tests';
export const SLACK_TEAM = 'T0TEAM01';
/** The one Slack user allowed to act. */
export const ANA = 'U0ANA001';

export interface SlackActionsApi {
  world: World;
  deps: Awaited<ReturnType<typeof createApiDeps>>;
  app: ReturnType<typeof createApiApp>;
  /** Catches what the work answers at `response_url`. */
  answers: Receiver;
  /** Every piece of work the doors handed on, in order. */
  handed: SlackWork[];
  /** How far the API's clock (and the signatures' time) is ahead of this one's. */
  later: { ms: number };
  /** POSTs `body` to `path`, signed now (plus `later`) unless `headers` are given. */
  post(path: string, body: string, headers?: Record<string, string>): Promise<Response>;
  /** Waits for the work handed on, and for any work that work hands on. */
  settled(): Promise<void>;
  /** A click's form body: a `block_actions` payload with `action`, from `user` (default ANA). */
  interaction(action: Record<string, unknown>, options?: { user?: string; message?: unknown }): string;
  /** The Slack app's message for an event of the world's, as the channel shows it now. */
  messageOf(uid: string): Promise<ReturnType<SlackStandIn['top']>[number] | undefined>;
}

export interface SlackActionsOptions {
  /** An API key instead of the acme token (for `tenants`). */
  apiKey?: string;
  /** The API's clients (with their scopes), in the secret object. */
  apiClients?: ApiClients;
  upstream?: ApiDepsOptions['upstream'];
  /** More for the app beside the runtime's (metrics, say). */
  app?: Partial<ApiDeps>;
}

/**
 * The Slack Web API stand-in for the file's tests and the receivers they start; `setUp` polls a
 * world with `config` (its destinations beside `app`, the Slack app) and builds the API over it.
 */
export function useSlackActions(emu: EmulatorFixture, db: DynamoFixture) {
  const receivers = useReceivers();
  let slack: SlackStandIn;
  beforeAll(async () => {
    slack = await startSlackApi();
  });
  afterAll(() => slack.close());

  async function setUp(
    config: Record<string, unknown> & { destinations?: Record<string, unknown> },
    options: SlackActionsOptions = {},
  ): Promise<SlackActionsApi> {
    const answers = await receivers();
    const slackActions = {
      signingSecret: { secret: 'slackSigning' },
      teamId: SLACK_TEAM,
      allowedUsers: [ANA],
      responseUrlPrefix: `${answers.url}/`,
    };
    const world = await makeWorld(
      emu,
      db,
      {
        digest: { threshold: 50, maxItems: 20 },
        actions: { slack: slackActions },
        ...config,
        destinations: {
          app: { type: 'slack', token: { secret: 'bot' }, channel: SLACK_CHANNEL, apiUrl: slack.url },
          ...config.destinations,
        },
      },
      {
        ...(options.apiKey ? { apiKey: options.apiKey } : {}),
        secrets: { bot: slack.token, slackSigning: SLACK_SECRET },
        clock: skipClock(),
      },
    );
    await world.cycle('events');
    const env = readEnvironment({
      EXPOSURE_API_URL: emu.url,
      ...(options.apiKey ? { EXPOSURE_API_KEY: options.apiKey } : { EXPOSURE_API_TOKEN: 'emu-acme-token' }),
      TABLE_NAME: world.table,
      DYNAMODB_ENDPOINT: db.endpoint,
    });
    const deps = await createApiDeps(
      env,
      { apiClients: options.apiClients ?? {}, slackSigning: SLACK_SECRET },
      {
        logger: memoryLogger('info'),
        // Without clients, the warning that there are none is expected.
        checkApiClients: options.apiClients !== undefined,
        slackActions,
        ...(options.upstream ? { upstream: options.upstream } : {}),
      },
    );
    const handed: SlackWork[] = [];
    const pending: Promise<void>[] = [];
    const later = { ms: 0 };
    const workDeps = {
      act: deps.act,
      lookup: deps.lookup,
      responseUrlPrefix: `${answers.url}/`,
      logger: deps.logger,
    };
    const app = createApiApp({
      ...deps,
      ...options.app,
      now: () => deps.now() + later.ms,
      handOff: async (work) => {
        handed.push(work);
        pending.push(runSlackWork(workDeps, JSON.parse(JSON.stringify(work))));
      },
    });
    return {
      world,
      deps,
      app,
      answers,
      handed,
      later,
      post: async (path, body, headers) => {
        const at = Math.floor((Date.now() + later.ms) / 1000);
        return app.request(path, {
          method: 'POST',
          headers: headers ?? slackSigned(body, SLACK_SECRET, at),
          body,
        });
      },
      settled: async () => {
        while (pending.length) await Promise.all(pending.splice(0));
      },
      interaction: (action, { user = ANA, message } = {}) =>
        `payload=${encodeURIComponent(
          JSON.stringify({
            type: 'block_actions',
            user: { id: user },
            team: { id: SLACK_TEAM },
            response_url: `${answers.url}/actions/1`,
            ...(message === undefined ? {} : { message }),
            actions: [action],
          }),
        )}`,
      messageOf: async (uid) => {
        const id = deliveryId('app', 'event', uid);
        const posted = (await world.runtime.deliveries.getMany([id])).get(id)?.posted;
        return slack.top().find((m) => m.ts === posted?.ts);
      },
    };
  }

  return {
    /** The Slack Web API stand-in (started before the file's tests). */
    get slack() {
      return slack;
    },
    /** Receivers closed after each test, for destinations beside the Slack app. */
    receivers,
    setUp,
  };
}
