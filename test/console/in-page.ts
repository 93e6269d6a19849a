/**
 * What the console's browser tests do in a page: sign in, read texts, evaluate, wait for a view to
 * have loaded, find a button by its accessible name. Puppeteer's own calls, with the waits these
 * pages need.
 */
import type { Page } from 'puppeteer-core';

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

/**
 * Evaluates `expression` in the page. A string, since this project's types are Node's, not the
 * DOM's (a callback naming `document` would not type-check here).
 */
export function inPage<T>(page: Page, expression: string): Promise<T> {
  return page.evaluate(expression) as Promise<T>;
}

/** The focused element: its id, name and text. */
export function focused(page: Page): Promise<{ id: string; name: string | null; text: string }> {
  return inPage(
    page,
    `({ id: document.activeElement?.id ?? '', name: document.activeElement?.getAttribute('name') ?? null, text: document.activeElement?.textContent ?? '' })`,
  );
}

/**
 * Does `act` (a click that changes the address), then waits for the view it leads to to have
 * loaded: the page's `hashchange`, then no region still `aria-busy`.
 */
export async function navigate(page: Page, act: () => Promise<unknown>): Promise<void> {
  // (`void`: the expression's value is not the promise, which evaluate would wait for.)
  await inPage(
    page,
    `void (window.__viewChanged = new Promise((r) => addEventListener('hashchange', r, { once: true })))`,
  );
  await act();
  await inPage(page, 'window.__viewChanged');
  await settled(page);
}

/** Waits until the view shows no region still loading (`aria-busy`). */
export async function settled(page: Page): Promise<void> {
  // Looked at on each change to the document, not on every frame: what it waits for is in the DOM.
  await page.waitForFunction(
    `!document.querySelector('main [aria-busy]') && !!document.querySelector('main h2')`,
    { timeout: 5_000, polling: 'mutation' },
  );
}

/** A button by its accessible name (a cell or a group may carry the same name). */
export function button(name: string): string {
  return `::-p-aria([name=${JSON.stringify(name)}][role="button"])`;
}
