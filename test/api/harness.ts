/**
 * The API under test: the real app in front of a real emulator (through a real UpstreamClient),
 * with fresh API client tokens per test file and a logger that keeps its lines. The silence and
 * status routes use a real table when one is given (dynalite); without one, their stores point at
 * a port nobody listens on, for tests that never reach them.
 */
import { randomBytes } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { actDeps } from '../../lib/actions/events.ts';
import { lookup } from '../../lib/actions/lookup.ts';
import type { SlackWork } from '../../lib/actions/slack-work.ts';
import type { ApiDeps } from '../../lib/api/app.ts';
import { createApiApp } from '../../lib/api/app.ts';
import { type ApiClients, sha256Hex } from '../../lib/api/auth.ts';
import type { ConsoleDeps } from '../../lib/api/console-api.ts';
import type { SlackSettings } from '../../lib/api/slack.ts';
import { systemClock } from '../../lib/clock.ts';
import { type Logger, memoryLogger } from '../../lib/log.ts';
import {
  type AuditStore,
  DynamoRefusalAudit,
  DynamoSilenceAudit,
  MemoryAuditStore,
} from '../../lib/state/audit.ts';
import { IdempotencyStore } from '../../lib/state/idempotency.ts';
import { recordAccess } from '../../lib/state/records/once.ts';
import { SilenceStore } from '../../lib/state/silences.ts';
import { StatusReader } from '../../lib/state/status.ts';
import { createDynamoClient } from '../../lib/state/table.ts';
import type { UpstreamClientOptions } from '../../lib/upstream/client.ts';
import type { EmulatorFixture } from '../helpers/emulator.ts';

export function newToken(): string {
  return randomBytes(24).toString('base64url');
}

/** Two API clients, their tokens, and the `apiClients` map the secret object would hold. */
export function apiClients() {
  const tokens = { runbook: newToken(), chatbot: newToken() };
  const digests: ApiClients = { runbook: sha256Hex(tokens.runbook), chatbot: sha256Hex(tokens.chatbot) };
  return { tokens, digests };
}

/** Strictly increasing milliseconds, so two audit records never share a timestamp. */
export function monotonicNow(): () => number {
  let last = 0;
  return () => {
    last = Math.max(Date.now(), last + 1);
    return last;
  };
}

export interface TableRef {
  client: DynamoDBClient;
  name: string;
}

let unreachable: DynamoDBClient | undefined;

/** The table-backed parts of ApiDeps: silences, their audit trail, and the status read. */
export function tableDeps(table?: TableRef, now: () => number = Date.now) {
  unreachable ??= createDynamoClient({ endpoint: 'http://127.0.0.1:9' });
  const client = table?.client ?? unreachable;
  const io = { client, tableName: table?.name ?? 'none', clock: { ...systemClock, now } };
  const silences = new SilenceStore(io);
  return {
    silences,
    silenceAudit: new DynamoSilenceAudit(client, io.tableName),
    status: new StatusReader(io, silences),
    // The console's reads (lib/api/console-api.ts); no destinations to test unless a test gives some.
    console: { io, tenants: async () => [] } as ConsoleDeps,
  };
}

export interface ApiUnderTest {
  app: ReturnType<typeof createApiApp>;
  deps: ApiDeps;
  audit: AuditStore;
  logger: ReturnType<typeof memoryLogger>;
  tokens: { runbook: string; chatbot: string };
  loads: () => number;
  /** What Slack's doors handed on (with `slack`). */
  handed: SlackWork[];
}

export function buildApi(
  emu: EmulatorFixture,
  options: {
    audit?: AuditStore;
    upstreamToken?: string;
    upstream?: Partial<UpstreamClientOptions>;
    upstreamTimeoutMs?: number;
    iamCallers?: boolean;
    table?: TableRef;
    /** More API clients (name to digest or `{digest, scopes}`) beside runbook and chatbot. */
    clients?: ApiClients;
    /** Slack's doors, with the work they hand on kept in `handed`. */
    slack?: SlackSettings;
    /** Beside the table's console reads: tenants, destinations to test, a clock. */
    console?: Partial<ConsoleDeps>;
  } = {},
): ApiUnderTest {
  const { tokens, digests } = apiClients();
  const logger = memoryLogger('debug');
  const audit = options.audit ?? new MemoryAuditStore();
  let loads = 0;
  const handed: SlackWork[] = [];
  const now = monotonicNow();
  const deps: ApiDeps = {
    // Short per-attempt timeout and backoff keep failure tests fast; the policy is the real one.
    upstream: emu.client(options.upstreamToken ?? 'emu-acme-token', {
      timeoutMs: 400,
      maxAttempts: 2,
      logger,
      ...options.upstream,
    }),
    audit,
    loadApiClients: async () => {
      loads += 1;
      return { ...digests, ...options.clients };
    },
    logger,
    now,
    ...withConsole(tableDeps(options.table, now), options.console),
    ...(options.table
      ? {
          act: tableAct(options.table, emu, logger, now),
          refusals: new DynamoRefusalAudit(options.table.client, options.table.name),
          idempotency: new IdempotencyStore({
            client: options.table.client,
            tableName: options.table.name,
            clock: { ...systemClock, now },
          }),
        }
      : {}),
    lookup: (query) => lookup({ upstream: emu.client(), passwords: 'masked' }, query),
    upstreamTimeoutMs: options.upstreamTimeoutMs ?? 1_500,
    iamCallers: options.iamCallers,
    ...(options.slack
      ? {
          slack: options.slack,
          handOff: async (work) => {
            handed.push(work);
          },
        }
      : {}),
  };
  return { app: createApiApp(deps), deps, audit, logger, tokens, loads: () => loads, handed };
}

function withConsole<T extends { console: ConsoleDeps }>(deps: T, more: Partial<ConsoleDeps> | undefined): T {
  return more ? { ...deps, console: { ...deps.console, ...more } } : deps;
}

/** Acting on events against the emulator, with its records in `table` (no destination hears of it). */
function tableAct(table: TableRef, emu: EmulatorFixture, logger: Logger, now: () => number) {
  const io = { client: table.client, tableName: table.name, clock: { ...systemClock, now } };
  return actDeps({ upstream: emu.client(), io, records: recordAccess(io), logger, targets: [] });
}

/** An asset of the emulator's acme tenant (the tenant of `emu-acme-token`). */
export function acmeAssetIds(emu: EmulatorFixture): number[] {
  return [...emu.running.emulator.dataset.tenant('acme').assets.keys()];
}

export function acmeAsset(emu: EmulatorFixture, id: number): Record<string, unknown> {
  const asset = emu.running.emulator.dataset.tenant('acme').assets.get(id);
  if (!asset) throw new Error(`no acme asset ${id}`);
  return asset;
}

export function bearer(token: string): Record<string, string> {
  return { Authorization: `Bearer ${token}` };
}

export const JSON_TYPE = { 'Content-Type': 'application/json' };

/**
 * One event's pending delivery record to `hook`, written as a poll writes it (the alert index too):
 * the top level's, or as the stream of `tenant` records it (its key `<tenant>:<uid>`).
 */
export async function recordAlert(table: TableRef, uid: string, tenant?: number) {
  const key = tenant === undefined ? uid : `${tenant}:${uid}`;
  const { DeliveryRecords } = await import('../../lib/state/records/index.ts');
  const { systemClock } = await import('../../lib/clock.ts');
  const page = await new DeliveryRecords(table.client, table.name, systemClock).recordPage(
    [
      {
        destination: 'hook',
        kind: 'event',
        key,
        source: tenant === undefined ? 'tenant' : `tenant:${tenant}`,
        routes: ['all'],
        status: 'pending',
        item: {
          metadata: { uid, type: 'leak', severity: 'high', matched_at: new Date().toISOString() },
        },
      },
    ],
    { exclusive: true },
  );
  return page.created;
}
