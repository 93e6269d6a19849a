/**
 * A real local run for the console's browser tests and screenshots: the emulator (with its
 * identity providers' stand-in) and dynalite over HTTP, a poll of each kind and a delivery pass of
 * the real runtime (world.ts) to two stand-in webhooks (one takes everything, one refuses
 * everything, so some deliveries are dead), then the `serve` command on the same table (in this
 * process: serve.ts), and headless Chromium (browser.ts) to drive the page it serves.
 *
 * One event carries hostile text in the fields a page shows (its identifiers' names, its
 * highlights): `<script>`, `<img src=x onerror=…>` and `<!channel>`; if any ran, it would set
 * `window.__pwned` or open a dialog, and `open()` records dialogs and errors.
 *
 * Two API clients: `analyst` (every scope the console uses) and `reader` (`read` only).
 * `startConsoleRun` stands alone (the screenshots script runs it, with a Chromium of its own);
 * `useConsoleRun` is it for a test file, on the test run's one shared Chromium (browser.ts
 * `sharedBrowser`). A page in a browser context of its own (`open`) is a renderer process and a
 * cold load, about a second of CPU each; so a file's tests share one tab (`tab`), which each test
 * gets afresh: loaded anew at the view it names, signed in with the token it names, at the default
 * size and colour scheme, with no dialogs or errors recorded yet. Only a test about what a new tab
 * keeps or asks for opens its own.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'puppeteer-core';
import { afterAll, beforeAll, inject } from 'vitest';
import { sha256Hex } from '../../lib/api/auth.ts';
import { DEMO_IDENTITY_SECRETS, type RunningEmulator, startEmulator } from '../../lib/emulator/index.ts';
import { demoIdentityInput } from '../../lib/rules/demo-config.ts';
import { startDynalite } from '../../lib/state/local.ts';
import { createDynamoClient, ensureTable } from '../../lib/state/table.ts';
import { staticToken } from '../../lib/upstream/auth.ts';
import { UpstreamClient } from '../../lib/upstream/client.ts';
import { newToken } from '../api/harness.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { makeWorld, type World } from '../helpers/world.ts';
import { type BrowserLease, ownBrowser, sharedBrowser } from './browser.ts';
import { inPage, settled, signIn } from './in-page.ts';
import { serve } from './serve.ts';

/** What the hostile samples would do if they ran: set this global, or open a dialog. */
export const PWNED = '__pwned';
export const HOSTILE = {
  script: `<script>window.${PWNED}='script'</script>`,
  img: `<img src=x onerror="window.${PWNED}='img';alert(1)">`,
  channel: '<!channel> @everyone',
};

export const ANALYST_SCOPES = [
  'read',
  'silences:write',
  'events:act',
  'destinations:write',
  'identity:act',
  'identity:disable',
] as const;

/** A page of the console, with what it said outside its document. */
export interface Tab {
  page: Page;
  /** Dialogs the page opened (alert, confirm, prompt): none, ever. */
  dialogs: string[];
  /** Errors the page's script threw or logged (a failed request included). */
  errors: string[];
}

export interface OpenPage extends Tab {
  close(): Promise<void>;
}

const VIEWPORT = { width: 1280, height: 800 };

export interface ConsoleRun {
  url: string;
  tokens: { analyst: string; reader: string };
  hook: Receiver;
  refusing: Receiver;
  world: World;
  emulator: RunningEmulator;
  /** The hostile event's uid (its key: the top-level sources' items are keyed by uid). */
  hostileUid: string;
  /** A new page in a context of its own (no sessionStorage shared), at the console, signed in with `token`. */
  open(token?: string, viewport?: { width: number; height: number }): Promise<OpenPage>;
  /**
   * The run's one kept tab (a page in a context of its own the first time), loaded anew at
   * `#/<view>` and signed in with `token` (through the form when it held another): what an
   * earlier test left in it (a view, a dialog, a size, a colour scheme, a token changed or
   * forgotten, recorded dialogs and errors) is gone. With `signedOut`, it keeps no token and shows
   * the sign-in form, for the test to sign in itself. Closed with the run.
   */
  tab(token: string, view?: string, options?: { signedOut?: boolean }): Promise<Tab>;
  close(): Promise<void>;
}

export interface ConsoleRunOptions {
  /** The browser the run drives: by default a Chromium of its own, closed with the run. */
  browser?: () => Promise<BrowserLease>;
  /** Opens the page `tab` keeps while the run starts, for a run whose tests will use it. */
  keptTab?: boolean;
}

/**
 * `serve` on the run's config and secrets in `dir` (`auth`: how it reaches the upstream), started
 * while a world on the same table polls and delivers (the tests need both, not one after the
 * other); its failure is thrown where `serving` is awaited, and if it started it stops with the run.
 */
export async function serveBesideWorld(
  run: {
    emulator: RunningEmulator;
    dynamo: { endpoint: string };
    client: ReturnType<typeof createDynamoClient>;
    table: string;
    dir: string;
    closers: (() => Promise<unknown>)[];
    config: unknown;
  },
  auth: Record<string, string>,
  world: { secrets?: Record<string, unknown>; apiKey?: string } = {},
): Promise<{ serving: Promise<{ url: string }>; world: World }> {
  const { emulator, dynamo, client, table, dir } = run;
  const serving = serve({
    EXPOSURE_API_URL: emulator.url,
    ...auth,
    DYNAMODB_ENDPOINT: dynamo.endpoint,
    TABLE_NAME: table,
    PORT: '0',
    SECRETS_FILE: join(dir, 'secrets.json'),
    ALERTS_CONFIG: join(dir, 'alerts.config.json'),
    LOG_LEVEL: 'error',
  });
  const served = serving.catch(() => undefined);
  run.closers.push(async () => (await served)?.stop());
  const made = await makeWorld(
    {
      running: emulator,
      url: emulator.url,
      client: (token = 'emu-acme-token', extra = {}) =>
        new UpstreamClient({ baseUrl: emulator.url, auth: staticToken(token), backoffBaseMs: 10, ...extra }),
    },
    { endpoint: dynamo.endpoint, client, table: async () => table },
    run.config as never,
    { table, ...world },
  );
  return { serving, world: made };
}

export async function startConsoleRun(options: ConsoleRunOptions = {}): Promise<ConsoleRun> {
  const tokens = { analyst: newToken(), reader: newToken() };
  const closers: (() => Promise<unknown>)[] = [];
  const close = async () => {
    for (const c of closers.splice(0).reverse()) await c().catch(() => undefined);
  };
  /** Whatever started is closed with the run, even when something beside it failed to start. */
  const closeWithRun = <T extends { close(): Promise<unknown> }>(started: T): T => {
    closers.push(() => started.close());
    return started;
  };
  try {
    const browserStarted = (options.browser ?? ownBrowser)();
    // The pages' contexts, closed before the browser is let go (a shared one outlives the run).
    const contexts = new Set<BrowserContext>();
    let keptStarted: Promise<OpenPage> | undefined;
    closers.push(async () => {
      await keptStarted?.catch(() => undefined);
      const { browser, release } = await browserStarted;
      await Promise.all([...contexts].map((c) => c.close().catch(() => undefined)));
      if (browser.connected) await release();
    });
    /** A blank page in a browser context of its own, its dialogs dismissed and its errors recorded. */
    const newPage = async (viewport: { width: number; height: number }): Promise<OpenPage> => {
      const { browser } = await browserStarted;
      const context = await browser.createBrowserContext();
      contexts.add(context);
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
      return {
        page,
        dialogs,
        errors,
        close: async () => {
          contexts.delete(context);
          await context.close();
        },
      };
    };

    // The kept tab's renderer starts while the world does (Chromium's CPU beside this process's).
    keptStarted = options.keptTab ? newPage(VIEWPORT) : undefined;
    keptStarted?.catch(() => undefined);
    const [emulator, dynamo, hook, refusing] = await Promise.all([
      startEmulator({
        seed: 7,
        rateLimits: 'off',
        eventsPerTenant: 6,
        lateMatchesPerTenant: 0,
        credentials: 16,
      }).then(closeWithRun),
      startDynalite().then(closeWithRun),
      startReceiver().then(closeWithRun),
      startReceiver({ status: 410, body: 'gone' }).then(closeWithRun),
    ]);
    const client = createDynamoClient({ endpoint: dynamo.endpoint });
    closers.push(async () => client.destroy());

    const acme = emulator.emulator.dataset.tenant('acme');
    const [hostile] = emulator.emulator.appendEvents(acme.id, 1);
    if (!hostile) throw new Error('the emulator added no event');
    const identifiers = hostile.item.identifiers as { id: number; name: string }[];
    identifiers.splice(
      0,
      identifiers.length,
      { id: identifiers[0]?.id ?? 11, name: HOSTILE.script },
      { id: 9_001, name: HOSTILE.img },
    );
    hostile.item.highlights = { content: [`${HOSTILE.channel} ${HOSTILE.img} ${HOSTILE.script}`] };

    const config = {
      sources: {
        tenantEvents: { lookback: 'P30D' },
        credentials: { domains: ['acme.test'], lookback: 'P60D' },
      },
      destinations: {
        siem: { type: 'webhook', url: hook.url },
        archive: { type: 'webhook', url: refusing.url },
      },
      routes: [{ name: 'all', to: ['siem', 'archive'] }],
      identity: demoIdentityInput(emulator.url),
    };
    const table = 'console';
    await ensureTable(client, table);
    const dir = await mkdtemp(join(tmpdir(), 'ea-console-'));
    closers.push(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, 'alerts.config.json'), JSON.stringify(config));
    await writeFile(
      join(dir, 'secrets.json'),
      JSON.stringify({
        ...DEMO_IDENTITY_SECRETS,
        apiClients: {
          analyst: { digest: sha256Hex(tokens.analyst), scopes: ANALYST_SCOPES },
          reader: { digest: sha256Hex(tokens.reader), scopes: ['read'] },
        },
      }),
    );
    const { serving, world } = await serveBesideWorld(
      { emulator, dynamo, client, table, dir, closers, config },
      { EXPOSURE_API_TOKEN: 'emu-acme-token' },
      { secrets: { ...DEMO_IDENTITY_SECRETS } },
    );
    // As the two kinds' functions run on AWS: side by side.
    await Promise.all([world.cycle('events'), world.cycle('credentials')]);
    await world.deliver();
    const service = await serving;

    let kept: OpenPage | undefined;

    return {
      url: service.url,
      tokens,
      hook,
      refusing,
      world,
      emulator,
      hostileUid: hostile.item.metadata.uid,
      close,
      async open(token, viewport = VIEWPORT) {
        const opened = await newPage(viewport);
        await opened.page.goto(`${service.url}/console`);
        if (token) await signIn(opened.page, token);
        return opened;
      },
      async tab(token, view = 'alerts', { signedOut = false } = {}) {
        let tab = kept;
        const fresh = !tab;
        if (!tab) {
          tab = await (keptStarted ?? newPage(VIEWPORT));
          kept = tab;
        } else {
          const { page } = tab;
          tab.dialogs.length = 0;
          tab.errors.length = 0;
          const size = page.viewport();
          if (size?.width !== VIEWPORT.width || size.height !== VIEWPORT.height)
            await page.setViewport(VIEWPORT);
          await page.emulateMediaFeatures();
          // The tab keeps this token alone: one an earlier test changed is forgotten, to sign in anew.
          await inPage(
            page,
            signedOut
              ? 'sessionStorage.clear()'
              : `Object.values(sessionStorage).join() === ${JSON.stringify(token)} || sessionStorage.clear()`,
          );
          // Loaded anew in the same renderer: a page.goto to an address that differs only in its
          // fragment would not load, and one through about:blank starts a renderer process each.
          await inPage(page, `history.replaceState(null, '', ${JSON.stringify(`#/${view}`)})`);
          await page.reload();
        }
        const { page } = tab;
        if (fresh) await page.goto(`${service.url}/console#/${view}`);
        const shown = await page.waitForSelector('#nav:not([hidden]), input[name=token]');
        if (signedOut) return { page, dialogs: tab.dialogs, errors: tab.errors };
        if (await shown?.evaluate((e) => e.tagName === 'INPUT')) await signIn(page, token);
        await settled(page);
        return { page, dialogs: tab.dialogs, errors: tab.errors };
      },
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The run for a test file: started before its tests, closed after them. */
export function useConsoleRun(): ConsoleRun {
  let run: ConsoleRun | undefined;
  beforeAll(async () => {
    run = await startConsoleRun({ browser: () => sharedBrowser(inject('browserBroker')), keptTab: true });
  }, 60_000);
  afterAll(async () => {
    await run?.close();
  });
  return new Proxy({} as ConsoleRun, {
    get(_, name) {
      if (!run) throw new Error('the console run has not started');
      return run[name as keyof ConsoleRun];
    },
  });
}
