/**
 * One test per resource table of the upstream spec: each field is checked for its type, its
 * nullability and whether it may be absent, and unknown fields are kept.
 */
import { describe, expect, it } from 'vitest';
import type * as z from 'zod/mini';
import {
  assetSchema,
  credentialSchema,
  eventItemSchema,
  globalSourceSchema,
  identitySchema,
  legacyPasswordRecordSchema,
  legacySearchEnvelopeSchema,
  legacySourceSchema,
  tokenInfoSchema,
  v2CredentialSchema,
} from '../../lib/upstream/schemas.ts';
import { describeIssues } from '../../lib/upstream/validate.ts';

const TS = '2026-11-20T10:00:00Z';
const TS_OFFSET = '2026-11-20T10:00:00.123456+00:00';

interface FieldSpec {
  /** Dotted path. */
  path: string;
  required: boolean;
  nullable?: boolean;
  /** Values of the wrong type. */
  wrong: unknown[];
}

function setAt(target: Record<string, unknown>, path: string, value: unknown, remove = false) {
  const parts = path.split('.');
  let cur = target;
  for (const part of parts.slice(0, -1)) cur = cur[part] as Record<string, unknown>;
  const last = parts.at(-1) as string;
  if (remove) delete cur[last];
  else cur[last] = value;
}

function checkTable(
  name: string,
  schema: z.ZodMiniType,
  sample: Record<string, unknown>,
  fields: FieldSpec[],
) {
  describe(name, () => {
    it('accepts the spec sample and keeps an unknown field', () => {
      const input = { ...structuredClone(sample), unlisted_field: { kept: true } };
      const result = schema.safeParse(input);
      expect(result.success).toBe(true);
      expect((result.data as Record<string, unknown>).unlisted_field).toEqual({ kept: true });
    });
    for (const field of fields) {
      it(`${field.path}: type, nullability and presence`, () => {
        for (const wrong of field.wrong) {
          const input = structuredClone(sample);
          setAt(input, field.path, wrong);
          const result = schema.safeParse(input);
          expect(result.success, `${field.path} = ${JSON.stringify(wrong)} must be refused`).toBe(false);
          const paths = describeIssues(result.error?.issues ?? [], input).map((i) => i.path);
          expect(
            paths.some(
              (p) => p === field.path || p.startsWith(`${field.path}.`) || p.startsWith(`${field.path}[`),
            ),
          ).toBe(true);
        }
        const nulled = structuredClone(sample);
        setAt(nulled, field.path, null);
        expect(schema.safeParse(nulled).success, `${field.path} = null`).toBe(field.nullable === true);
        const missing = structuredClone(sample);
        setAt(missing, field.path, undefined, true);
        expect(schema.safeParse(missing).success, `${field.path} missing`).toBe(!field.required);
      });
    }
  });
}

const str = (path: string, required = false, nullable = false): FieldSpec => ({
  path,
  required,
  nullable,
  wrong: [42, true, ['x']],
});
const num = (path: string, required = false): FieldSpec => ({ path, required, wrong: ['1', true, {}] });
const int = (path: string, required = false): FieldSpec => ({ path, required, wrong: ['1', 1.5, true] });
const bool = (path: string, required = false): FieldSpec => ({ path, required, wrong: ['true', 1, {}] });
const ts = (path: string, required = false, nullable = false): FieldSpec => ({
  path,
  required,
  nullable,
  wrong: ['yesterday', 12345, '2026-13-45T99:00:00Z'],
});
const tsOffset = (path: string, required = false): FieldSpec => ({
  path,
  required,
  wrong: ['2026-11-20T10:00:00', 'soon', 5],
});
const strList = (path: string, required = false): FieldSpec => ({ path, required, wrong: ['a', [1], {}] });
const obj = (path: string, required = false): FieldSpec => ({ path, required, wrong: ['x', 3, [1]] });

checkTable(
  'token information',
  tokenInfoSchema,
  { tenant_id: 1, api_key_id: 2, organization_id: 3, user_id: 4, user_email: 'a@b.c', scopes: ['x'] },
  [
    num('tenant_id', true),
    num('api_key_id', true),
    num('organization_id', true),
    num('user_id', true),
    str('user_email', true),
    strList('scopes', true),
  ],
);

const legacySource = {
  id: 's1',
  name: 'Leak',
  description: 'en',
  description_fr: 'fr',
  hash_description: 'plain',
  hash_type: 'plaintext',
  breached_at: TS,
  leaked_at: TS,
  is_alerts_enabled: true,
  related_urls: ['https://x.example'],
  url: 'https://x.example',
};
checkTable('legacy source', legacySourceSchema, legacySource, [
  str('id', true),
  str('name', true),
  str('description'),
  str('description_fr'),
  str('hash_description'),
  str('hash_type'),
  ts('breached_at'),
  ts('leaked_at'),
  bool('is_alerts_enabled'),
  strList('related_urls'),
  str('url', false, true),
]);

const legacyRecord = {
  id: 10,
  credential_hash: 'ab12',
  domain: 'example.com',
  hash: 'hunter2',
  hash_type: 'unknown',
  extra: {},
  imported_at: TS_OFFSET,
  source: legacySource,
  source_id: 's1',
  source_params: null,
};
const recordFields = [
  int('id', true),
  str('credential_hash'),
  str('domain', false, true),
  str('hash', true),
  str('hash_type'),
  obj('extra'),
  tsOffset('imported_at', true),
  str('source_id'),
];
checkTable('legacy password record', legacyPasswordRecordSchema, legacyRecord, [
  ...recordFields,
  { path: 'source', required: false, wrong: ['s1', 3, { id: 's1' }] },
  { path: 'source_params', required: false, nullable: true, wrong: [] },
]);

checkTable(
  'identity',
  identitySchema,
  { name: 'a@example.com', links: { self: '/x' }, passwords: [legacyRecord] },
  [str('name', true), obj('links'), { path: 'passwords', required: true, wrong: ['x', [{ id: 'x' }], {}] }],
);

checkTable(
  'v2 credential',
  v2CredentialSchema,
  { ...legacyRecord, source: null, identity_name: 'a@example.com' },
  [
    ...recordFields,
    str('identity_name', true),
    { path: 'source', required: false, nullable: true, wrong: [legacySource, 'x'] },
  ],
);

const globalSource = {
  id: 's1',
  name: 'Leak',
  description_en: 'en',
  description_fr: 'fr',
  breached_at: TS,
  leaked_at: null,
  is_alert_enabled: true,
};
checkTable('global source', globalSourceSchema, globalSource, [
  str('id', true),
  str('name', true),
  str('description_en'),
  str('description_fr'),
  ts('breached_at', false, true),
  ts('leaked_at', false, true),
  bool('is_alert_enabled'),
]);

checkTable(
  'credential (global search form)',
  credentialSchema,
  {
    id: 1,
    identity_name: 'a@example.com',
    domain: 'example.com',
    hash: 'hunter2',
    hash_type: null,
    imported_at: TS_OFFSET,
    known_password_id: null,
    source_id: 's1',
    source: globalSource,
  },
  [
    int('id', true),
    str('identity_name', true),
    str('domain', true),
    str('hash', true),
    str('hash_type', false, true),
    tsOffset('imported_at', true),
    { path: 'known_password_id', required: false, nullable: true, wrong: [] },
    str('source_id', true),
    { path: 'source', required: false, wrong: ['s1', { name: 'x' }] },
  ],
);

const severity = (path: string, required = false, nullable = false): FieldSpec => ({
  path,
  required,
  nullable,
  wrong: ['urgent', 'HIGH', 3],
});
checkTable(
  'event item',
  eventItemSchema,
  {
    metadata: {
      estimated_created_at: TS,
      matched_at: TS,
      type: 'forum_post',
      uid: 'forum_post/darkforum/thread/1/post/2',
      severity: 'high',
    },
    tenant_metadata: { severity: { original: 'medium', override: 'high' }, tags: ['vip'], notes: 'n' },
    identifiers: [{ id: 1, name: 'example.com' }],
    highlights: { content: ['<mark>example.com</mark>'] },
  },
  [
    ts('metadata.estimated_created_at', true),
    ts('metadata.matched_at', true),
    str('metadata.type', true),
    { path: 'metadata.uid', required: true, wrong: [5, 'no-slashes', 'only/two'] },
    severity('metadata.severity', true),
    severity('tenant_metadata.severity.original', false, true),
    severity('tenant_metadata.severity.override', false, true),
    strList('tenant_metadata.tags'),
    str('tenant_metadata.notes', false, true),
    { path: 'identifiers', required: false, wrong: ['x', [{ id: '1', name: 'a' }], [{ id: 1 }]] },
    { path: 'highlights', required: false, wrong: ['x', { content: 'not a list' }, { content: [1] }] },
  ],
);

checkTable(
  'asset',
  assetSchema,
  {
    id: 5,
    name: 'example.com',
    type: 'domain',
    data: {},
    search_types: ['leak'],
    experimental_search_types: [],
    count: 3,
    data_updated_at: TS,
    feed_id: 9,
    fetching_progress: 100,
    is_disabled: false,
    risks: [1, 2],
    source: 'USER',
    tenant_id: 1,
    urn: 'urn:x',
    v3_refs: { asset_uuid: 'u' },
  },
  [
    num('id', true),
    str('name'),
    str('type'),
    obj('data'),
    strList('search_types'),
    strList('experimental_search_types'),
    num('count'),
    ts('data_updated_at'),
    num('feed_id'),
    num('fetching_progress'),
    bool('is_disabled', true),
    { path: 'risks', required: false, wrong: ['1', ['1'], {}] },
    str('source'),
    num('tenant_id'),
    str('urn'),
    str('v3_refs.asset_uuid'),
  ],
);

checkTable(
  'legacy global search result',
  legacySearchEnvelopeSchema,
  { items: [{ a: 1 }], links: { next: 'abc' }, nb_hits: 3, search_after: 'abc' },
  [
    { path: 'items', required: true, wrong: ['x', {}] },
    { path: 'links.next', required: false, nullable: true, wrong: [3, true] },
    int('nb_hits'),
    { path: 'search_after', required: false, nullable: true, wrong: [3, true] },
  ],
);
