/**
 * The console as a client bound to one tenant sees it (issue 49), in a real browser against
 * `serve`, after a real poll of two tenants of the emulator's MSSP (A: 1002 Globex, B: 1003
 * Initech) and a delivery pass to a destination that refuses (so every delivery is dead, and an
 * unbound admin would be offered to re-queue it).
 *
 * `globex` is an admin bound to A (every scope, re-queueing included, which the API refuses a bound
 * client); `lead` is an admin bound to none, the control that shows B's alerts, name and buttons
 * are there to be hidden. One tab for the file, on the run's shared Chromium (harness.ts says why).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sha256Hex } from '../../lib/api/auth.ts';
import { MSSP_API_KEY } from '../../lib/emulator/dataset.ts';
import { type RunningEmulator, startEmulator } from '../../lib/emulator/index.ts';
import { startDynalite } from '../../lib/state/local.ts';
import { createDynamoClient, ensureTable } from '../../lib/state/table.ts';
import { newToken } from '../api/harness.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { sharedBrowser } from './browser.ts';
import { serveBesideWorld } from './harness.ts';
import { button, inPage, navigate, settled, signIn, texts } from './in-page.ts';

const A = { id: 1002, name: 'Globex' };
const B = { id: 1003, name: 'Initech' };
const tokens = { globex: newToken(), lead: newToken() };

interface Row {
  key: string;
  title: string;
  tenant?: { id: number; name: string };
}

let url = '';
let page: Page;
const errors: string[] = [];
const dialogs: string[] = [];
/** Every alert, as the unbound client's API answer lists them. */
let alerts: Row[] = [];
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  const closeWithRun = <T extends { close(): Promise<unknown> }>(started: T): T => {
    closers.push(() => started.close());
    return started;
  };
  const browsing = (async () => {
    const lease = await sharedBrowser(inject('browserBroker'));
    closers.push(() => lease.release());
    const context: BrowserContext = await (lease.browser as Browser).createBrowserContext();
    closers.push(() => context.close());
    const opened = await context.newPage();
    opened.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    opened.on('pageerror', (e) => errors.push(String(e)));
    opened.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    return opened;
  })();
  const [emulator, dynamo, refusing] = await Promise.all([
    startEmulator({
      seed: 7,
      rateLimits: 'off',
      eventsPerTenant: 3,
      lateMatchesPerTenant: 0,
      credentials: 0,
    }).then(closeWithRun) as Promise<RunningEmulator>,
    startDynalite().then(closeWithRun),
    startReceiver({ status: 400, body: 'no' }).then(closeWithRun),
  ]);
  const client = createDynamoClient({ endpoint: dynamo.endpoint });
  closers.push(async () => client.destroy());
  const table = 'tenants';
  await ensureTable(client, table);
  const config = {
    tenants: [
      { id: A.id, name: A.name, sources: { tenantEvents: { lookback: 'P30D' } } },
      { id: B.id, name: B.name, sources: { tenantEvents: { lookback: 'P30D' } } },
    ],
    destinations: { archive: { type: 'webhook', url: refusing.url } },
    routes: [{ name: 'all', to: ['archive'] }],
  };
  const dir = await mkdtemp(join(tmpdir(), 'ea-tenants-'));
  closers.push(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'alerts.config.json'), JSON.stringify(config));
  await writeFile(
    join(dir, 'secrets.json'),
    JSON.stringify({
      apiClients: {
        globex: { digest: sha256Hex(tokens.globex), role: 'admin', tenants: [A.name] },
        lead: { digest: sha256Hex(tokens.lead), role: 'admin' },
      },
    }),
  );
  const { serving, world } = await serveBesideWorld(
    { emulator, dynamo, client, table, dir, closers, config },
    { EXPOSURE_API_KEY: MSSP_API_KEY.key },
    { apiKey: MSSP_API_KEY.key },
  );
  await world.cycle('events');
  await world.deliver();
  url = (await serving).url;
  const res = await fetch(`${url}/alerts`, { headers: { Authorization: `Bearer ${tokens.lead}` } });
  alerts = ((await res.json()) as { items: Row[] }).items;
  page = await browsing;
  await page.goto(`${url}/console#/alerts`);
}, 60_000);

afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

const of = (tenant: { id: number }) => alerts.filter((a) => a.tenant?.id === tenant.id);

/** The tab, loaded anew at `#/<view>` and signed in with `token` alone. */
async function as(token: string, view = 'alerts'): Promise<void> {
  errors.length = 0;
  dialogs.length = 0;
  await inPage(
    page,
    `sessionStorage.clear(); history.replaceState(null, '', ${JSON.stringify(`#/${view}`)})`,
  );
  await page.reload();
  await signIn(page, token);
  await settled(page);
}

async function go(view: string): Promise<void> {
  await navigate(page, () => inPage(page, `location.hash = ${JSON.stringify(`#/${view}`)}`));
}

/** Everything the page shows as text, the filter's choices (values too) included. */
async function shown(): Promise<string> {
  return inPage<string>(
    page,
    `document.body.innerText + ' ' + [...document.querySelectorAll('option')].map((o) => o.value + ' ' + o.textContent).join(' ')`,
  );
}

/** Whatever of B's the page shows: its name (any case), its keys, uids and stream ids. */
async function bShown(): Promise<string[]> {
  const text = (await shown()).toLowerCase();
  const bStrings = [
    B.name,
    `${B.id}:`,
    `:${B.id}`,
    ...of(B).flatMap((a) => [a.key, a.key.slice(`${B.id}:`.length), a.title]),
  ];
  return bStrings.filter((s) => text.includes(s.toLowerCase()));
}

const tenantChoices = () => texts(page, 'select[name=tenant] option');
const listed = () => texts(page, '.results tbody td[data-label="Title or login"]');

describe('the console for a client bound to a tenant', () => {
  it('lists its tenant’s alerts only, names only its tenant in the filter, and nothing of the other tenant in any view', async () => {
    // The world holds both tenants' alerts (else what follows would prove nothing).
    expect(of(A).length).toBeGreaterThan(0);
    expect(of(B).length).toBeGreaterThan(0);

    await as(tokens.globex);
    expect(await tenantChoices()).toEqual(['Any tenant', A.name]);
    expect((await listed()).sort()).toEqual(
      of(A)
        .map((a) => a.title)
        .sort(),
    );
    expect(await texts(page, '.results [role=status]')).toEqual([
      `${of(A).length} alerts on this page, newest recorded first.`,
    ]);
    expect(await bShown()).toEqual([]);

    await page.select('select[name=tenant]', String(A.id));
    await navigate(page, () => page.locator(button('Apply filters')).click());
    expect(await inPage(page, 'location.hash')).toBe(`#/alerts?tenant=${A.id}`);
    expect((await listed()).length).toBe(of(A).length);

    // Its alert's dead delivery: no re-queue, which the API refuses a bound client.
    await go(`alerts/${encodeURIComponent(of(A)[0]?.key ?? '')}`);
    expect(await texts(page, 'section[aria-labelledby=deliveries-title] td[data-label=State]')).toEqual([
      'dead',
    ]);
    expect(await texts(page, 'main button')).not.toContainEqual(expect.stringMatching(/Re-queue/));

    // Destinations: said in words, no counts (they mix tenants), no test or re-queue.
    await go('destinations');
    expect((await texts(page, '.results [role=status]'))[0]).toMatch(
      /^The client "globex" is bound to tenants, .* so the API shows it no destination counts\./,
    );
    expect(await page.$$('.results table')).toHaveLength(0);
    expect(await texts(page, 'main button')).toEqual([]);

    await go('streams');
    expect(await texts(page, '.results tbody td[data-label=Stream]')).toEqual([`tenant:${A.id}`]);
    expect(await shown()).not.toMatch(/Search quota|Active silences/);

    for (const view of ['silences', 'audit', 'destinations', 'streams', 'alerts']) {
      await go(view);
      expect({ view, shown: await bShown() }).toEqual({ view, shown: [] });
    }
    expect(errors).toEqual([]);
    expect(dialogs).toEqual([]);

    // Another tenant asked for in the address, or one that does not exist: refused as unknown,
    // without naming the tenants the config has (the browser logs the 404s, hence after the above).
    for (const asked of [String(B.id), 'Hooli']) {
      await go(`alerts?tenant=${asked}`);
      expect((await texts(page, '.results [role=alert]'))[0]).toMatch(
        /^The alerts could not be loaded\. Not found/,
      );
      expect({ asked, shown: await bShown() }).toEqual({ asked, shown: [] });
    }
  });

  it('a client bound to none sees both tenants, their names, the counts and the buttons', async () => {
    await as(tokens.lead);
    expect(await tenantChoices()).toEqual(['Any tenant', A.name, B.name]);
    expect((await listed()).length).toBe(of(A).length + of(B).length);
    expect((await bShown()).length).toBeGreaterThan(0);
    await go(`alerts/${encodeURIComponent(of(A)[0]?.key ?? '')}`);
    expect(await texts(page, 'main button')).toContain('Re-queue for archive');
    await go('destinations');
    expect(await texts(page, '.results tbody td[data-label=Destination]')).toEqual(['archive']);
    expect(await texts(page, 'main button')).toContain('Test');
    await go('streams');
    expect(await shown()).toMatch(/Search quota/);
    expect(errors).toEqual([]);
  });
});
