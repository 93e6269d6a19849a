/**
 * A real local run for the console's browser tests: the emulator and dynalite over HTTP, a poll
 * cycle and a delivery pass of the real runtime (world.ts) to two stand-in webhooks (one takes
 * everything, one refuses everything, so some deliveries are dead), then `serve` as a process of
 * its own (the built command, as `npm start` runs its API) on the same table, and headless
 * Chromium (browser.ts) to drive the page it serves.
 *
 * One event carries hostile text in the fields a page shows (its identifiers' names, its
 * highlights): `<script>`, `<img src=x onerror=…>` and `<!channel>`; if any ran, it would set
 * `window.__pwned` or open a dialog, and `page()` records both.
 *
 * Two API clients: `analyst` (every scope the console uses) and `reader` (`read` only).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll } from 'vitest';
import { sha256Hex } from '../../lib/api/auth.ts';
import { newToken } from '../api/harness.ts';
import { type CliService, startCliService } from '../helpers/cli-process.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { makeWorld, type World } from '../helpers/world.ts';
import { launchBrowser } from './browser.ts';

/** What the hostile samples would do if they ran: set this global, or open a dialog. */
export const PWNED = '__pwned';
export const HOSTILE = {
  script: `<script>window.${PWNED}='script'</script>`,
  img: `<img src=x onerror="window.${PWNED}='img';alert(1)">`,
  channel: '<!channel> @everyone',
};

export const ANALYST_SCOPES = ['read', 'silences:write', 'events:act', 'destinations:write'] as const;

export interface OpenPage {
  page: Page;
  /** Dialogs the page opened (alert, confirm, prompt): none, ever. */
  dialogs: string[];
  /** Errors the page's script threw or logged, and CSP violations. */
  errors: string[];
  close(): Promise<void>;
}

export interface ConsoleRun {
  readonly url: string;
  readonly tokens: { analyst: string; reader: string };
  readonly hook: Receiver;
  readonly refusing: Receiver;
  readonly world: World;
  readonly emu: ReturnType<typeof useEmulator>;
  /** The hostile event's uid (its key: the top-level sources' items are keyed by uid). */
  readonly hostileUid: string;
  /** A new page in a context of its own (no sessionStorage shared), at the console, signed in with `token`. */
  open(token?: string, viewport?: { width: number; height: number }): Promise<OpenPage>;
}

export function useConsoleRun(): ConsoleRun {
  const emu = useEmulator({ eventsPerTenant: 4, lateMatchesPerTenant: 0, credentials: 0 });
  const db = useDynalite();
  const tokens = { analyst: newToken(), reader: newToken() };
  let dir: string;
  let service: CliService | undefined;
  let browser: Browser | undefined;
  let hook: Receiver;
  let refusing: Receiver;
  let world: World;
  let hostileUid = '';

  beforeAll(async () => {
    const browserStarted = launchBrowser();
    [hook, refusing] = await Promise.all([startReceiver(), startReceiver({ status: 410, body: 'gone' })]);
    const acme = emu.running.emulator.dataset.tenant('acme');
    const [hostile] = emu.running.emulator.appendEvents(acme.id, 1);
    if (!hostile) throw new Error('the emulator added no event');
    const identifiers = hostile.item.identifiers as { id: number; name: string }[];
    identifiers.splice(
      0,
      identifiers.length,
      { id: identifiers[0]?.id ?? 11, name: HOSTILE.script },
      { id: 9_001, name: HOSTILE.img },
    );
    hostile.item.highlights = { content: [`${HOSTILE.channel} ${HOSTILE.img} ${HOSTILE.script}`] };
    hostileUid = hostile.item.metadata.uid;

    const config = {
      sources: { tenantEvents: { lookback: 'P30D' } },
      destinations: {
        siem: { type: 'webhook', url: hook.url },
        archive: { type: 'webhook', url: refusing.url },
      },
      routes: [{ name: 'all', to: ['siem', 'archive'] }],
    };
    const table = await db.table();
    world = await makeWorld(emu, db, config, { table });
    await world.cycle('events');
    await world.deliver();

    dir = await mkdtemp(join(tmpdir(), 'ea-console-'));
    await writeFile(join(dir, 'alerts.config.json'), JSON.stringify(config));
    await writeFile(
      join(dir, 'secrets.json'),
      JSON.stringify({
        apiClients: {
          analyst: { digest: sha256Hex(tokens.analyst), scopes: ANALYST_SCOPES },
          reader: { digest: sha256Hex(tokens.reader), scopes: ['read'] },
        },
      }),
    );
    service = await startCliService(['serve'], {
      cwd: dir,
      env: {
        EXPOSURE_API_URL: emu.url,
        EXPOSURE_API_TOKEN: 'emu-acme-token',
        DYNAMODB_ENDPOINT: db.endpoint,
        TABLE_NAME: table,
        PORT: '0',
        SECRETS_FILE: join(dir, 'secrets.json'),
        ALERTS_CONFIG: join(dir, 'alerts.config.json'),
        LOG_LEVEL: 'error',
      },
    });
    browser = await browserStarted;
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await Promise.all([hook?.close(), refusing?.close()]);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  return {
    get url() {
      return (service as CliService).url;
    },
    tokens,
    get hook() {
      return hook;
    },
    get refusing() {
      return refusing;
    },
    get world() {
      return world;
    },
    emu,
    get hostileUid() {
      return hostileUid;
    },
    async open(token, viewport = { width: 1280, height: 800 }) {
      const context = await (browser as Browser).createBrowserContext();
      const page = await context.newPage();
      await page.setViewport(viewport);
      const dialogs: string[] = [];
      const errors: string[] = [];
      page.on('dialog', (dialog) => {
        dialogs.push(`${dialog.type()}: ${dialog.message()}`);
        void dialog.dismiss();
      });
      page.on('pageerror', (error) => errors.push(String(error)));
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text());
      });
      await page.goto(`${(service as CliService).url}/console`);
      if (token) await signIn(page, token);
      return { page, dialogs, errors, close: () => context.close() };
    },
  };
}

/** Types the token into the labelled field and waits for the views' navigation. */
export async function signIn(page: Page, token: string): Promise<void> {
  await page.locator('::-p-aria(API token)').fill(token);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#nav:not([hidden])');
}

/** The text of every element `selector` finds. */
export function texts(page: Page, selector: string): Promise<string[]> {
  return page.$$eval(selector, (els) => els.map((e) => e.textContent ?? ''));
}
