/**
 * The config reference stays true to the schema: every key of the config has a description (a key
 * added to the schema without one fails here), `config schema` carries them all, no description
 * is left for a key that is gone, and docs/config.md is what `npm run docs` writes now.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/alerts-config.ts';
import { runCli } from '../../lib/cli/run.ts';
import { CONFIG_DOCS, withKindDocs } from '../../lib/rules/config-docs.ts';
import { docFor, documentedJsonSchema, schemaKeys } from '../../lib/rules/config-reference.ts';
import { configJsonSchema } from '../../lib/rules/schema.ts';
import { captureIo } from '../helpers/io.ts';

describe('the config reference', () => {
  const keys = schemaKeys(configJsonSchema());
  // Each kind's keys are described in its own folder (lib/destinations/<kind>/docs.ts).
  beforeAll(() => withKindDocs());

  it('knows every key of the schema (over a hundred, each destination kind’s included)', () => {
    expect(keys.length).toBeGreaterThan(100);
    expect(keys.map((k) => k.path)).toContain('destinations.<name>{pagerduty}.routingKey');
    expect(keys.filter((k) => !docFor(k.path)).map((k) => k.path)).toEqual([]);
  });

  it('has no description left over for a key the schema no longer has', () => {
    const suffixes = new Set(
      keys.flatMap((k) => {
        const parts = [k.path, k.path.replace(/\{[a-z]+\}/g, '')].map((p) => p.split('.'));
        return parts.flatMap((p) => p.map((_, i) => p.slice(i).join('.')));
      }),
    );
    expect(Object.keys(CONFIG_DOCS).filter((key) => !suffixes.has(key))).toEqual([]);
  });

  it('config schema gives every key a description', async () => {
    const io = captureIo({});
    expect(await runCli(['config', 'schema'], io)).toBe(0);
    const printed = JSON.parse(io.out);
    expect(printed).toEqual(documentedJsonSchema());
    const undescribed = schemaKeys(printed).filter((k) => typeof k.node.description !== 'string');
    expect(undescribed.map((k) => k.path)).toEqual([]);
  });

  it('docs/config.md is what npm run docs writes: regenerate it after changing the schema or a description', async () => {
    const io = captureIo({});
    expect(await runCli(['config', 'reference'], io)).toBe(0);
    expect(readFileSync(join(PROJECT_ROOT, 'docs/config.md'), 'utf8')).toBe(io.out);
    // A row for every key, and the annotated example.
    for (const { path } of keys) expect(io.out).toContain(`| \`${path.replace(/\{[a-z]+\}/g, '')}\``);
    expect(io.out).toContain(
      '"routingKey": {"secret":"oncallRoutingKey"},  // the Events API v2 integration key',
    );
  });
});
