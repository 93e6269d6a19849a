/**
 * What each function of the stack may do, and nothing more: the actions it is granted (exported, so
 * the tests can hold the code's real calls against them) and the grants that put them on its role,
 * each narrowed to the table partitions, index or queue the function works on.
 */
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { TABLE_KEYS } from '../lib/state/table.ts';
import type { AlertsFunction } from './function.ts';

/**
 * DynamoDB actions of the workers: leases, cursors and the claim mark (UpdateItem), delivery
 * records, packs and the alert index (BatchWriteItem; Query to find a pack again), quarantine, the
 * streams' last-polled times (BatchGetItem), and the items of the shared rate governor and of the
 * quota (GetItem, UpdateItem).
 */
export const POLLER_TABLE_ACTIONS = [
  'dynamodb:BatchGetItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:Query',
  'dynamodb:UpdateItem',
] as const;
/** The workers read due deliveries from the index. */
export const POLLER_INDEX_ACTIONS = ['dynamodb:Query'] as const;
/** What the event source needs of a worker's queue (what AWSLambdaSQSQueueExecutionRole allows). */
export const WORKER_QUEUE_ACTIONS = [
  'sqs:ReceiveMessage',
  'sqs:DeleteMessage',
  'sqs:GetQueueAttributes',
] as const;
/** The dispatchers read when each stream was last polled (one BatchGet per 100 streams), nothing else. */
export const DISPATCHER_TABLE_ACTIONS = ['dynamodb:BatchGetItem'] as const;
/** Partition keys of the stream items (lib/state/streams.ts), the only ones a dispatcher reads. */
export const STREAM_KEYS = 'stream#*';
/** With a heartbeat, a dispatcher writes its dispatch (lib/state/heartbeat.ts), under these keys only. */
export const DISPATCH_KEYS = 'heartbeat#*';
/** The API writes and lists its audit trail (toggles and silence changes). */
export const API_TABLE_ACTIONS = ['dynamodb:PutItem', 'dynamodb:Query'] as const;
/**
 * The API's run-time silences (lib/state/silences.ts): made (PutItem), listed (Query), found by id
 * (GetItem) and ended (UpdateItem), in their one partition.
 */
export const API_SILENCE_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:Query',
  'dynamodb:UpdateItem',
] as const;
/**
 * Acting on events (lib/actions/events.ts, POST /events/actions): the action's record (created
 * once, updated as it goes) and the flags we know of each event (read, written), the event's
 * delivery records (read: which destinations were sent it), and its follow-ups' records (created
 * once, for the pollers' delivery pass to send).
 */
export const API_ACTION_ACTIONS = [
  'dynamodb:BatchGetItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
] as const;
/** The partition keys those touch. */
export const ACTION_KEYS = ['action#*', 'flags#*', 'dlv#*', 'fu#*'];
/**
 * Idempotency-Key records (lib/state/idempotency.ts): claimed (PutItem), read when held (GetItem),
 * completed or released after a request that changed nothing (UpdateItem). Never deleted.
 */
export const API_IDEMPOTENCY_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
] as const;
/** The partition keys of those records. */
export const IDEMPOTENCY_KEYS = ['idem#*'];
/** The partition key of the silences. */
export const SILENCE_KEY = 'silence';
/**
 * GET /status (lib/state/status.ts) reads, in batches: the catalog the pollers write, the quota
 * reading, and the state items of the streams and destinations. Read only.
 */
export const API_STATUS_ACTIONS = ['dynamodb:BatchGetItem'] as const;
export const STATUS_KEYS = ['catalog', 'quota', 'stream#*', 'dest#*'];
/**
 * ... with identity providers in the config, their state (lib/identity/store.ts): one Query of its
 * one partition, read only (grantIdentityStatus).
 */
export const API_IDENTITY_STATUS_ACTIONS = ['dynamodb:Query'] as const;
export const IDENTITY_STATUS_KEY = 'idp';
/**
 * ... and acting on accounts (POST /identity/actions, GET /identity/actions/{id}): which items
 * name a login (one Query of its `idlog#` partition: only a login with a stored verdict may be
 * acted on, lib/identity/store.ts), and the action's record (`idaction#`: created once, read back;
 * a worker does the rest). No verdict, answer or provider secret: those stay the workers'.
 */
export const API_IDENTITY_LOGIN_ACTIONS = ['dynamodb:Query'] as const;
export const IDENTITY_LOGIN_KEYS = ['idlog#*'];
export const API_IDENTITY_ACTION_ACTIONS = ['dynamodb:BatchGetItem', 'dynamodb:PutItem'] as const;
export const IDENTITY_ACTION_KEYS = ['idaction#*'];
/** ... and counts each destination's pending and dead deliveries on the index: counts only. */
export const API_INDEX_ACTIONS = ['dynamodb:Query'] as const;
/**
 * The console's reads (lib/state/alert-list.ts, lib/state/acted.ts): the alert index's month
 * partitions, an alert's own item (one by one, or a page's shared details in a BatchGetItem), and
 * what was done to an event or a login. Read only.
 */
export const API_CONSOLE_READ_ACTIONS = ['dynamodb:BatchGetItem', 'dynamodb:Query'] as const;
export const CONSOLE_READ_KEYS = ['alerts#*', 'alert#*', 'acted#*'];
/**
 * An action taken through the API points each of its targets to it (lib/state/acted.ts), written
 * with the audit entry: BatchWriteItem puts, in those partitions only.
 */
export const API_ACTED_ACTIONS = ['dynamodb:BatchWriteItem'] as const;
export const ACTED_KEYS = ['acted#*'];
/**
 * A destination's test message, once a minute for every process (lib/state/test-pace.ts): its
 * one item per destination, taken with a conditional UpdateItem, read when refused.
 */
export const API_TEST_PACE_ACTIONS = ['dynamodb:GetItem', 'dynamodb:UpdateItem'] as const;
export const TEST_PACE_KEYS = ['dtest#*'];
/**
 * Re-queueing a destination's dead deliveries (lib/state/records/requeue.ts) finds them on the
 * index by their ids alone: no other attribute of a delivery (its item) is read there.
 */
export const API_DEAD_INDEX_ACTIONS = ['dynamodb:Query'] as const;
export const DEAD_INDEX_ATTRIBUTES = ['id'];
/** The API takes its turns from the shared rate governor (lib/state/governor.ts): its one item. */
export const API_GOVERNOR_ACTIONS = ['dynamodb:GetItem', 'dynamodb:UpdateItem'] as const;
/** The partition key of the shared rate governor's item. */
export const GOVERNOR_KEY = 'governor';

/** What the grants need of the stack: its table, and the ARNs its secrets are granted on. */
export interface GrantTargets {
  table: ITable;
  /** Exact for a created secret or a complete ARN, `name-??????` for a name. */
  secretPolicyArn: string;
  /** The identity providers' secret, when there is one: the workers' only, never the API's. */
  identitySecretPolicyArn?: string;
}

function grantSecretRead(fn: AlertsFunction, policyArn: string): void {
  // GetSecretValue only (grantRead would add DescribeSecret, which the code never calls).
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [policyArn] }),
  );
}

/**
 * A worker: the secrets (the identity providers' too: only the workers act on accounts), its
 * records and cursors, the index of due deliveries, its stream queue.
 */
export function grantWorkerAccess(fn: AlertsFunction, on: GrantTargets, queue: IQueue): void {
  grantSecretRead(fn, on.secretPolicyArn);
  if (on.identitySecretPolicyArn) grantSecretRead(fn, on.identitySecretPolicyArn);
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({ actions: [...POLLER_TABLE_ACTIONS], resources: [on.table.tableArn] }),
  );
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: [...POLLER_INDEX_ACTIONS],
      resources: [`${on.table.tableArn}/index/${TABLE_KEYS.index}`],
    }),
  );
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({ actions: [...WORKER_QUEUE_ACTIONS], resources: [queue.queueArn] }),
  );
}

/** A dispatcher: the streams' last-polled times, its dispatch record, and sending to its stream queue. */
export function grantDispatcherAccess(fn: AlertsFunction, on: GrantTargets, queue: IQueue): void {
  // No secret: it loads the config and the streams' last-polled times only (lib/poll/turn.ts).
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: [...DISPATCHER_TABLE_ACTIONS],
      resources: [on.table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [STREAM_KEYS] } },
    }),
  );
  // The dispatch the heartbeat's workers count its jobs against: PutItem, in its own partitions.
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['dynamodb:PutItem'],
      resources: [on.table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [DISPATCH_KEYS] } },
    }),
  );
  // grantSendMessages would add GetQueueAttributes and GetQueueUrl, which the dispatcher never calls.
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [queue.queueArn] }),
  );
}

/**
 * The API: the main secret (never the identity providers': it hands account actions to a worker),
 * and in the table only the partitions each of its routes works on.
 */
export function grantApiAccess(fn: AlertsFunction, on: GrantTargets): void {
  grantSecretRead(fn, on.secretPolicyArn);
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: [...API_TABLE_ACTIONS],
      resources: [on.table.tableArn],
      // Audit items only: the API can neither read nor overwrite cursors (status reads stream and
      // destination state, read only, and actions reach their own records, below).
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['audit#*'] } },
    }),
  );
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: [...API_SILENCE_ACTIONS],
      resources: [on.table.tableArn],
      conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [SILENCE_KEY] } },
    }),
  );
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: [...API_ACTION_ACTIONS],
      resources: [on.table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ACTION_KEYS } },
    }),
  );
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: [...API_IDEMPOTENCY_ACTIONS],
      resources: [on.table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': IDEMPOTENCY_KEYS } },
    }),
  );
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: [...API_STATUS_ACTIONS],
      resources: [on.table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': STATUS_KEYS } },
    }),
  );
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: [...API_INDEX_ACTIONS],
      resources: [`${on.table.tableArn}/index/${TABLE_KEYS.index}`],
      // A count of pending or dead deliveries, never the deliveries (their items) themselves.
      conditions: { StringEquals: { 'dynamodb:Select': 'COUNT' } },
    }),
  );
  // The console (lib/api/console-api.ts): its reads, the actions' pointers, the tests' pace.
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: [...API_CONSOLE_READ_ACTIONS],
      resources: [on.table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': CONSOLE_READ_KEYS } },
    }),
  );
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: [...API_ACTED_ACTIONS],
      resources: [on.table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ACTED_KEYS } },
    }),
  );
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: [...API_TEST_PACE_ACTIONS],
      resources: [on.table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': TEST_PACE_KEYS } },
    }),
  );
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: [...API_DEAD_INDEX_ACTIONS],
      resources: [`${on.table.tableArn}/index/${TABLE_KEYS.index}`],
      // The ids of dead deliveries, never the deliveries (their items) themselves.
      conditions: {
        StringEquals: { 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' },
        'ForAllValues:StringEquals': { 'dynamodb:Attributes': DEAD_INDEX_ATTRIBUTES },
      },
    }),
  );
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: [...API_GOVERNOR_ACTIONS],
      resources: [on.table.tableArn],
      // The governor's item only: its turn of the shared rate, and the slow-down after a 429.
      conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [GOVERNOR_KEY] } },
    }),
  );
}

/**
 * With identity providers in the config, GET /status reads their state: a Query of the one
 * partition they are kept in (lib/identity/store.ts), nothing else of identity (no answer, no
 * verdict, no secret).
 */
export function grantIdentityStatus(fn: AlertsFunction, on: GrantTargets): void {
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: [...API_IDENTITY_STATUS_ACTIONS],
      resources: [on.table.tableArn],
      conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [IDENTITY_STATUS_KEY] } },
    }),
  );
}

/**
 * With identity providers in the config, the API records account actions for a worker to take:
 * it reads which items name a login, and writes and reads the action's record, nothing else.
 */
export function grantIdentityActions(fn: AlertsFunction, on: GrantTargets): void {
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: [...API_IDENTITY_LOGIN_ACTIONS],
      resources: [on.table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': IDENTITY_LOGIN_KEYS } },
    }),
  );
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: [...API_IDENTITY_ACTION_ACTIONS],
      resources: [on.table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': IDENTITY_ACTION_KEYS } },
    }),
  );
}

/**
 * The API hands what a Slack request leaves for after its answer, and account actions it
 * recorded, to the events worker's queue.
 */
export function grantWorkQueue(fn: AlertsFunction, queue: IQueue): void {
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [queue.queueArn] }),
  );
}
