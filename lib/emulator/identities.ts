/**
 * The credential store as the legacy identity endpoints (2, 5, 7, 8) and the global search (9)
 * show it: legacy records and sources, identities grouped from records, and the matching rules.
 */
import type { Dataset } from './dataset.ts';
import type { EmulatedCredential } from './dataset-types.ts';

/** Whether `name`'s domain part is `domain` or a subdomain of it. */
export function emailInDomain(name: string, domain: string): boolean {
  const host = name.slice(name.lastIndexOf('@') + 1).toLowerCase();
  const want = domain.toLowerCase();
  return host === want || host.endsWith(`.${want}`);
}

export function keywordMatcher(keyword: string): (name: string) => boolean {
  const lower = keyword.toLowerCase();
  const lead = lower.startsWith('*');
  const trail = lower.endsWith('*') && lower.length > 1;
  const core = lower.slice(lead ? 1 : 0, trail ? -1 : undefined);
  return (name) => {
    const n = name.toLowerCase();
    if (lead && trail) return n.includes(core);
    if (lead) return n.endsWith(core);
    if (trail) return n.startsWith(core);
    return n === core;
  };
}

export function legacyRecord(dataset: Dataset, cr: EmulatedCredential) {
  const source = dataset.source(cr.source_id);
  return {
    id: cr.id,
    credential_hash: cr.credential_hash,
    domain: cr.domain,
    hash: cr.hash,
    hash_type: cr.hash_type ?? 'unknown',
    extra: {},
    imported_at: cr.imported_at,
    source: source && {
      id: source.id,
      name: source.name,
      description: source.description_en,
      description_fr: source.description_fr,
      hash_description: cr.hash_type ?? 'unknown',
      hash_type: cr.hash_type ?? 'unknown',
      ...(source.breached_at ? { breached_at: source.breached_at } : {}),
      ...(source.leaked_at ? { leaked_at: source.leaked_at } : {}),
      is_alerts_enabled: source.is_alert_enabled,
      related_urls: [],
      url: null,
    },
    source_id: cr.source_id,
    source_params: null,
  };
}

export function globalCredential(dataset: Dataset, cr: EmulatedCredential) {
  const { password: _password, ...served } = cr;
  const source = dataset.source(cr.source_id);
  return { ...served, ...(source ? { source: { ...source } } : {}) };
}

/** Legacy identity paging: records by ascending id after `from`, `size` of them, grouped by account. */
export function identityPage(
  dataset: Dataset,
  match: (cr: EmulatedCredential) => boolean,
  from: number | undefined,
  size: number,
) {
  const identities = new Map<string, { name: string; links: Record<string, string>; passwords: unknown[] }>();
  let taken = 0;
  for (const cr of dataset.credentials) {
    if (taken >= size) break;
    if (from !== undefined && cr.id <= from) continue;
    if (!match(cr)) continue;
    taken += 1;
    let identity = identities.get(cr.identity_name);
    if (!identity) {
      identity = {
        name: cr.identity_name,
        links: { self: `/identities/${encodeURIComponent(cr.identity_name)}` },
        passwords: [],
      };
      identities.set(cr.identity_name, identity);
    }
    identity.passwords.push(legacyRecord(dataset, cr));
  }
  return [...identities.values()];
}
