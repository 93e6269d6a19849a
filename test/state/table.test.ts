/**
 * The local table on real dynalite: runs started together on a fresh table all go on, whoever
 * created it (before, the losers of the race failed with ResourceInUseException).
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createDynamoClient, ensureTable } from '../../lib/state/table.ts';
import { useDynalite } from '../helpers/dynamo.ts';

const db = useDynalite();

describe('ensureTable', () => {
  it('five runs at once on a fresh table: one creates it, all go on', async () => {
    const name = `t-${randomBytes(4).toString('hex')}`;
    const clients = Array.from({ length: 5 }, () => createDynamoClient({ endpoint: db.endpoint }));
    try {
      const outcomes = await Promise.all(clients.map((c) => ensureTable(c, name)));
      expect(outcomes).toHaveLength(5);
      expect(outcomes.every((o) => o === 'created' || o === 'exists')).toBe(true);
      expect(await ensureTable(db.client, name)).toBe('exists');
    } finally {
      for (const c of clients) c.destroy();
    }
  });
});
