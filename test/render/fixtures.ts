/** Small builders for events, credentials and alerts, shared by the rules and render tests. */
import type { CredentialAlert, DeliveryAlert, EventAlert } from '../../lib/model.ts';
import type { RenderOptions } from '../../lib/render/types.ts';
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

export function renderOptions(over: Partial<RenderOptions> = {}): RenderOptions {
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
