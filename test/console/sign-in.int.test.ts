/**
 * Signing in to the console in a real browser, against `serve` (harness.ts): the page asks once for
 * a token, keeps it in the tab's sessionStorage alone (never a URL, a cookie or localStorage), says
 * so when a token is wrong or stops working and asks again, forgets it on Sign out, and works from
 * the keyboard alone; a `read` token sees every view and no button that changes anything.
 */

import type { Page } from 'puppeteer-core';
import { describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '../../lib/console/page.ts';
import { useConsoleRun } from './harness.ts';
import { button, focused, inPage, texts } from './in-page.ts';

const run = useConsoleRun();

/** What the tab keeps: sessionStorage, localStorage's keys, and its cookies. */
const stored = (page: Page) =>
  inPage<{ session: Record<string, string>; local: string[]; cookie: string }>(
    page,
    '({ session: Object.fromEntries(Object.entries(sessionStorage)), local: Object.keys(localStorage), cookie: document.cookie })',
  );

/** Buttons that change something, by the words they carry. */
const CHANGES =
  /^(Test|Re-queue|Expire|Create silence|Ignore|Undo|Mark remediated|Silence similar|Act on the account)/;

describe('signing in', () => {
  it('asks once; a wrong token is refused in words and never kept; the right one is kept in this tab alone', async () => {
    const { page, errors, dialogs } = await run.tab(run.tokens.analyst, 'alerts', { signedOut: true });
    const response = await page.reload();
    expect(response?.headers()['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    // The field is focused and labelled: typing and Enter are enough.
    await page.waitForSelector('::-p-aria(API token)');
    expect((await focused(page)).name).toBe('token');
    await page.keyboard.type('not-the-token-of-anyone');
    await page.keyboard.press('Enter');
    const refused = await page.waitForSelector('[role=alert]');
    expect(await refused?.evaluate((e) => e.textContent)).toMatch(
      /not accepted: it is wrong, expired or was removed/,
    );
    expect((await stored(page)).session).toEqual({});

    await page.locator('::-p-aria(API token)').fill(run.tokens.analyst);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#nav:not([hidden])');
    expect(await page.$eval('#who', (e) => e.textContent)).toContain('Signed in as analyst');
    const kept = await stored(page);
    expect(Object.values(kept.session)).toEqual([run.tokens.analyst]);
    expect(kept.local).toEqual([]);
    expect(kept.cookie).toBe('');
    expect(await page.browserContext().cookies()).toEqual([]);
    expect(page.url()).not.toContain(run.tokens.analyst);

    // A reload keeps the tab signed in; another tab's context does not share it.
    await page.reload();
    await page.waitForSelector('#nav:not([hidden])');
    const other = await run.open();
    await other.page.waitForSelector('::-p-aria(API token)');
    expect((await stored(other.page)).session).toEqual({});
    await other.close();
    expect(dialogs).toEqual([]);
    expect(errors.filter((e) => !/status of 401/.test(e))).toEqual([]);
  });

  it('a token the API stops accepting: the next request says so, forgets it and asks again', async () => {
    const { page } = await run.tab(run.tokens.analyst);
    await inPage(
      page,
      `for (const key of Object.keys(sessionStorage)) sessionStorage.setItem(key, 'revoked-token-0000')`,
    );
    await page.locator('::-p-aria(Streams)').click();
    const said = await page.waitForSelector('[role=alert]');
    expect(await said?.evaluate((e) => e.textContent)).toMatch(/no longer accepts this token/);
    expect(await page.$('::-p-aria(API token)')).not.toBeNull();
    expect((await stored(page)).session).toEqual({});
  });

  it('Sign out forgets the token', async () => {
    const { page } = await run.tab(run.tokens.analyst);
    await page.locator(button('Sign out')).click();
    await page.waitForSelector('::-p-aria(API token)');
    expect(await page.$eval('main', (e) => e.textContent)).toContain('Signed out');
    expect((await stored(page)).session).toEqual({});
  });

  it("keyboard alone: Shift+Tab from a view reaches the views' links, Enter opens one and moves focus to its heading", async () => {
    const { page } = await run.tab(run.tokens.analyst);
    await page.waitForFunction(`document.activeElement?.id === 'view-title'`, { timeout: 5_000 });
    for (const view of ['Silences', 'Destinations', 'Streams']) {
      // Back from the view's heading, through the header, to the view's link.
      for (let i = 0; i < 12; i++) {
        await page.keyboard.down('Shift');
        await page.keyboard.press('Tab');
        await page.keyboard.up('Shift');
        if ((await focused(page)).text === view) break;
      }
      expect((await focused(page)).text).toBe(view);
      await page.keyboard.press('Enter');
      await page.waitForFunction(
        `document.activeElement?.id === 'view-title' && document.activeElement.textContent === ${JSON.stringify(view)}`,
        { timeout: 5_000 },
      );
    }
  });
});

describe('a read token', () => {
  it('sees every view and no button that changes anything', async () => {
    const { page } = await run.tab(run.tokens.reader);
    expect(await page.$eval('#who', (e) => e.textContent)).toContain('(read)');
    for (const view of ['silences', 'destinations', 'streams']) {
      await page.goto(`${run.url}/console#/${view}`);
      await page.waitForSelector('.results table, .results .empty');
      const buttons = await texts(page, 'main button');
      expect(
        buttons.filter((b) => CHANGES.test(b)),
        view,
      ).toEqual([]);
    }
    // The silence form is not there at all.
    await page.goto(`${run.url}/console#/silences`);
    await page.waitForSelector('.results .empty, .results table');
    expect(await page.$('form.create')).toBeNull();
  });
});
