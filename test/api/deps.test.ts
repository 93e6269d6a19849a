/**
 * The API's dependencies as functions/api.ts, `serve` and the bench build them (createApiDeps),
 * against dynalite and the emulator over HTTP: the API clients given with the secrets are still
 * there when the cache is refreshed, when there is no secret source to read them from again.
 * Before, the refresh (every 5 minutes) read an empty secret object, and every token was refused:
 * the bench's API section answered 401 from its sixth minute on.
 */
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../lib/api/auth.ts';
import { createApiDeps } from '../../lib/api/deps.ts';
import { readEnvironment } from '../../lib/env.ts';
import { silentLogger } from '../../lib/log.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';

const emu = useEmulator();
const db = useDynalite();

describe('createApiDeps', () => {
  it('secrets given with no source: a refresh of the API clients keeps them', async () => {
    const env = readEnvironment({
      EXPOSURE_API_URL: emu.url,
      EXPOSURE_API_TOKEN: 'emu-acme-token',
      DYNAMODB_ENDPOINT: db.endpoint,
      TABLE_NAME: await db.table(),
    });
    const clients = { bench: sha256Hex('bench-token') };
    const deps = await createApiDeps(env, { apiClients: clients }, { logger: silentLogger });
    try {
      expect(await deps.loadApiClients()).toEqual(clients);
      // The refresh, as after the cache's five minutes.
      expect(await deps.loadApiClients()).toEqual(clients);
    } finally {
      deps.close();
    }
  });
});
