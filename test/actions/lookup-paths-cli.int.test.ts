/**
 * `lookup domain` and `lookup keyword` refuse what is not a domain or a keyword with exit 2 and
 * one line, as a process, before any upstream request; a domain still goes, as one segment of the
 * path. The other doors (the API, the Slack command, the client) are lookup-paths.test.ts; this
 * one starts CLI processes, so it is in the integration project.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliProcess } from '../helpers/cli-process.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';

const emu = useEmulator({ eventsPerTenant: 2, credentials: 50 });
const db = useDynalite();
const control = () => emu.running.emulator.control;
/** Every upstream request made under `/leaksdb/identities` (a lookup's endpoints and what is above them). */
const identityRequests = () => control().requests.filter((r) => r.path.startsWith('/leaksdb/identities'));

describe('lookup domain: only a domain name, at every door', () => {
  it('the CLI refuses each with exit 2 and one line, and asks the upstream nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ea-lookup-paths-'));
    await writeFile(
      join(dir, 'alerts.config.json'),
      JSON.stringify({
        destinations: { terminal: { type: 'console' } },
        routes: [{ name: 'all', to: ['terminal'] }],
      }),
    );
    const env = {
      ALERTS_CONFIG: join(dir, 'alerts.config.json'),
      EXPOSURE_API_URL: emu.url,
      EXPOSURE_API_TOKEN: 'emu-acme-token',
      TABLE_NAME: await db.table(),
      DYNAMODB_ENDPOINT: db.endpoint,
    };
    control().clearLog();
    for (const domain of ['..', '.', 'a/b']) {
      const r = await runCliProcess(['lookup', 'domain', domain], { env });
      expect(r.code, `${domain}: ${r.err}`).toBe(2);
      expect(r.err).toContain(`${JSON.stringify(domain)} is not a domain name`);
      expect(r.err.trim().split('\n')).toHaveLength(1);
    }
    const keyword = await runCliProcess(['lookup', 'keyword', '..'], { env });
    expect(keyword.code).toBe(2);
    expect(keyword.err).toContain('cannot be a keyword');
    expect(identityRequests()).toEqual([]);
    // A domain still goes, as one segment of the path.
    const good = await runCliProcess(['lookup', 'domain', 'acme.test', '--json'], { env });
    expect(good.code, good.err).toBe(0);
    expect(identityRequests().map((r) => r.path)).toEqual(['/leaksdb/identities/by_domain/acme.test']);
  }, 20_000);
});
