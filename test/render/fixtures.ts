/** Small builders for events, credentials and alerts, shared by the rules and render tests. */

import {
  type DestinationConfig,
  type DestinationType,
  kindOf,
  previewDestination,
  type ResolvedDestination,
} from '../../lib/destinations/kinds.ts';
import type { CredentialAlert, DeliveryAlert, EventAlert } from '../../lib/model.ts';
import { noticeFor, renderFor } from '../../lib/render/lazy.ts';
import type { Notice, Rendered, RenderOptions } from '../../lib/render/types.ts';
import { type AlertsConfig, configSchema } from '../../lib/rules/config.ts';
import type { Credential, EventItem } from '../../lib/upstream/schemas.ts';

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> : T[K] };

let seq = 0;

export function makeEvent(
  over: DeepPartial<EventItem> & { metadata?: Partial<EventItem['metadata']> } = {},
): EventItem {
  seq++;
  const base: EventItem = {
    metadata: {
      estimated_created_at: '2026-11-20T10:00:00Z',
      matched_at: '2026-11-20T10:05:00Z',
      type: 'forum_post',
      uid: `forum_post/darkforum/thread-${seq}`,
      severity: 'medium',
    },
    tenant_metadata: { severity: { original: 'medium' }, tags: [], notes: '' },
    identifiers: [{ id: 12, name: 'acme.test' }],
    highlights: { content: ['mention of <mark>acme.test</mark> in a forum post'] },
  };
  return {
    ...base,
    ...over,
    metadata: { ...base.metadata, ...over.metadata },
    tenant_metadata: { ...base.tenant_metadata, ...over.tenant_metadata },
  } as EventItem;
}

export function makeCredential(over: Partial<Credential> = {}): Credential {
  seq++;
  return {
    id: 100_000 + seq,
    identity_name: `user${seq}@example.com`,
    domain: 'example.com',
    hash: 'Summer2024!',
    hash_type: 'plaintext',
    imported_at: '2026-11-20T08:00:00+00:00',
    source_id: 'collection-1',
    source: {
      id: 'collection-1',
      name: 'Collection #1',
      breached_at: '2026-01-01T00:00:00Z',
      leaked_at: '2026-02-01T00:00:00Z',
    },
    ...over,
  };
}

export function eventAlert(item: EventItem, source = 'tenant'): EventAlert {
  return { kind: 'event', key: item.metadata.uid, source, item };
}

export function credentialAlert(item: Credential, source = `credentials:${item.domain}`): CredentialAlert {
  return { kind: 'credential', key: String(item.id), source, item };
}

export function toDelivery(
  alert: EventAlert | CredentialAlert,
  destination = 'soc',
  routes = ['all'],
): DeliveryAlert {
  return { ...alert, deliveryId: `${destination}~${alert.kind}~${alert.key}`, destination, routes };
}

export const NOW = new Date('2026-11-21T12:00:00Z');

/** `K`: the kind's own options (`kindOptions`), none by default. */
export function renderOptions<K = never>(over: Partial<RenderOptions<K>> = {}): RenderOptions<K> {
  return {
    destination: 'soc',
    appUrl: 'https://app.example.test',
    digest: { threshold: 5, maxItems: 20 },
    now: NOW,
    ...over,
  };
}

export function config(input: Record<string, unknown>): AlertsConfig {
  return configSchema.parse({
    destinations: { soc: { type: 'console' }, ciso: { type: 'console' } },
    ...input,
  });
}

/** What a test names a destination by: its kind, and any config keys that matter to it. */
export type RenderTarget = { type: DestinationType } & Record<string, unknown>;

/** The least config of each kind, so a test can name a kind alone (a Slack webhook, not an app). */
const LEAST: Record<DestinationType, Record<string, unknown>> = {
  slack: { url: 'https://hooks.slack.test/x' },
  email: {
    provider: 'generic',
    url: 'https://mail.example.test/send',
    from: 'a@example.test',
    to: ['b@example.test'],
  },
  webhook: { url: 'https://siem.example.test/in' },
  googlechat: { url: 'https://chat.googleapis.test/v1/spaces/AAAA/messages?key=k&token=t' },
  teams: { url: 'https://teams.example.test/x' },
  discord: { url: 'https://discord.example.test/x' },
  mattermost: { url: 'https://mattermost.example.test/hooks/x' },
  pagerduty: { routingKey: 'key', credentialSeverity: 'error' },
  jira: {
    url: 'https://acme.atlassian.test',
    email: 'a@example.test',
    apiToken: 't',
    project: 'SEC',
    issueType: 'Task',
  },
  servicenow: { url: 'https://acme.service-now.test', username: 'u', password: 'p', table: 'incident' },
  splunk: { url: 'https://splunk.example.test:8088', token: 't', sourcetype: 'exposure_alerts' },
  sentinel: {
    tenantId: 't',
    clientId: 'c',
    clientSecret: 's',
    endpoint: 'https://dce.example.test',
    ruleId: 'dcr-1',
    stream: 'Custom-ExposureAlerts_CL',
    loginUrl: 'https://login.example.test',
  },
  console: {},
};

/** `target` as a destination of that kind, resolved without secrets (as `preview` resolves). */
export function destinationOf(target: RenderTarget, name = 'soc'): ResolvedDestination {
  const slackApp = target.type === 'slack' && (target.token !== undefined || target.app !== undefined);
  const least = slackApp ? { token: 'xoxb-test', channel: 'C0123ABCD' } : LEAST[target.type];
  return previewDestination(name, {
    ...least,
    ...target,
    ...(slackApp ? { app: undefined } : {}),
  } as DestinationConfig);
}

/** What `target` receives for `alerts`, rendered by its kind. */
export function renderTo(
  target: RenderTarget,
  alerts: DeliveryAlert[],
  opts: RenderOptions,
  { color }: { color: boolean } = { color: false },
): Promise<Rendered<unknown>[]> {
  const destination = destinationOf(target, opts.destination);
  // As the runtime gives them: what the kind's face makes of the run, unless the test says.
  const kindOptions = opts.kindOptions ?? kindOf(destination.type).renderOptions?.({ color });
  return renderFor(destination, alerts, { ...opts, kindOptions });
}

/**
 * What `target` receives for `notice` (a test message, an operator notice), rendered by its kind;
 * `P`, the payload's shape, as the test reads it.
 */
export async function noticeTo<P = unknown>(
  target: RenderTarget,
  notice: Notice,
  opts: RenderOptions,
): Promise<P> {
  return (await noticeFor(destinationOf(target, opts.destination), notice, opts)) as P;
}
