/**
 * The console's entry: asks for a token once (sign-in.ts), learns what it may do (`GET /whoami`)
 * and whether the API runs as a dry run (a banner then says so), then shows one view at a time,
 * chosen by the address's fragment (`#/alerts`, `#/alerts/<key>`, `#/silences`, `#/destinations`,
 * `#/streams`, `#/audit`), so Back, bookmarks and a reload work and the token never appears in an
 * address.
 *
 * Each view draws into an element of its own: a slow answer for a view the person already left
 * lands in a detached element, never over the view they are looking at.
 */
import { explain, identify, session, whenSignedOut } from './api.ts';
import { errorLine, fill, h, statusLine } from './dom.ts';
import { signIn } from './sign-in.ts';
import { type Grant, SCOPES, type Scope, type View, type WhoAmI } from './types.ts';
import { alertView } from './views/alert.ts';
import { alertsView } from './views/alerts.ts';
import { auditView } from './views/audit.ts';
import { destinationsView } from './views/destinations.ts';
import { silencesView } from './views/silences.ts';
import { streamsView } from './views/streams.ts';

const VIEWS: [name: string, label: string, draw: (view: View) => Promise<void> | void][] = [
  ['alerts', 'Alerts', (v) => (v.path.length ? alertView(v) : alertsView(v))],
  ['silences', 'Silences', silencesView],
  ['destinations', 'Destinations', destinationsView],
  ['streams', 'Streams', streamsView],
  ['audit', 'Audit', auditView],
];

const main = document.getElementById('main') as HTMLElement;
const nav = document.getElementById('nav') as HTMLElement;
const whoBox = document.getElementById('who') as HTMLElement;
const dryRunBox = document.getElementById('dry-run') as HTMLElement;
let who: WhoAmI | undefined;

function parseHash(): { name: string; path: string[]; params: URLSearchParams } {
  const raw = location.hash.replace(/^#\/?/, '');
  const [pathPart = '', queryPart = ''] = raw.split('?', 2);
  const parts = pathPart.split('/').filter(Boolean);
  let decoded: string[];
  try {
    decoded = parts.map((p) => decodeURIComponent(p));
  } catch {
    decoded = parts;
  }
  const [name = 'alerts', ...path] = decoded;
  return { name, path, params: new URLSearchParams(queryPart) };
}

function drawNav(current: string): void {
  fill(
    nav,
    h(
      'ul',
      {},
      VIEWS.map(([name, label]) =>
        h(
          'li',
          {},
          h('a', { href: `#/${name}`, 'aria-current': name === current ? 'page' : undefined }, label),
        ),
      ),
    ),
  );
  nav.hidden = false;
}

/** In a dry run, a banner above every view: its actions are refused, and the person should know before trying. */
function drawDryRun(me: WhoAmI | undefined): void {
  dryRunBox.hidden = !me?.dryRun;
  dryRunBox.textContent = me?.dryRun
    ? 'Dry run (npm start -- --dry-run): nothing is sent and nothing is done outside. Alerts, silences and lookups work; acting on events, accounts or assets, test messages and re-queueing are refused.'
    : '';
}

/** Every scope any of the holder's grants gives, in the API's order. */
function scopesOf(me: WhoAmI): Scope[] {
  const all = new Set(me.grants.flatMap((g) => g.scopes));
  return SCOPES.filter((s) => all.has(s));
}

const unbound = (g: Grant) => g.tenants === undefined && !g.topLevel;

/**
 * Scopes over what every tenant shares (a destination's test message, re-queueing): the API
 * refuses them to a client bound to tenants (403), so only a grant bound to none counts.
 */
const SHARED: readonly Scope[] = ['destinations:write'];

function mayDo(me: WhoAmI, scope: Scope): boolean {
  return me.grants.some((g) => g.scopes.includes(scope) && (!SHARED.includes(scope) || unbound(g)));
}

/** The tenants the holder is bound to (View.tenants); undefined when a grant binds it to none. */
function tenantsOf(me: WhoAmI): Set<number> | undefined {
  if (me.grants.some(unbound)) return undefined;
  return new Set(me.grants.flatMap((g) => g.tenants ?? []));
}

function drawWho(me: WhoAmI): void {
  drawDryRun(me);
  fill(
    whoBox,
    h('span', {}, 'Signed in as ', h('strong', {}, me.name)),
    ' ',
    h('span', { class: 'scopes' }, `(${scopesOf(me).join(', ') || 'no scopes'})`),
    ' ',
    h(
      'button',
      {
        type: 'button',
        onclick: () => {
          session.forget();
          showSignIn('Signed out. The token is forgotten in this tab.');
        },
      },
      'Sign out',
    ),
  );
}

async function route(): Promise<void> {
  const me = who;
  if (!me) return;
  const { name, path, params } = parseHash();
  const found = VIEWS.find(([n]) => n === name);
  drawNav(found ? name : '');
  const root = h('section', { class: `view view-${name}`, 'aria-labelledby': 'view-title' });
  main.replaceChildren(root);
  if (!found) {
    fill(
      root,
      h('h2', { id: 'view-title', tabindex: -1 }, 'Not found'),
      errorLine(`No view is called "${name}".`),
    );
    return;
  }
  const can = (scope: Scope) => mayDo(me, scope);
  if (!can('read')) {
    fill(
      root,
      h('h2', { id: 'view-title', tabindex: -1 }, found[1]),
      errorLine(
        `The client "${me.name}" lacks the read scope, so the console cannot show anything. Ask for a token with read.`,
      ),
    );
    return;
  }
  try {
    await found[2]({ root, who: me, can, tenants: tenantsOf(me), path, params });
  } catch (error) {
    root.append(errorLine(explain(error)));
  }
  // Move focus to the view's heading, so keyboard and screen-reader users start there.
  if (main.contains(root)) (root.querySelector('h2') as HTMLElement | null)?.focus({ preventScroll: true });
}

function showSignIn(why?: string): void {
  who = undefined;
  nav.hidden = true;
  whoBox.replaceChildren();
  drawDryRun(undefined);
  main.replaceChildren(
    signIn(why, (me) => {
      who = me;
      drawWho(me);
      void route();
    }),
  );
  (main.querySelector('input') as HTMLInputElement | null)?.focus();
}

async function boot(): Promise<void> {
  whenSignedOut(showSignIn);
  window.addEventListener('hashchange', () => void route());
  const token = session.token();
  if (!token) return showSignIn();
  main.replaceChildren(statusLine('Checking the API token kept in this tab…'));
  try {
    who = await identify(token);
    drawWho(who);
    await route();
  } catch (error) {
    session.forget();
    showSignIn(
      (error as { status?: number }).status === 401
        ? 'The API no longer accepts the token this tab kept (it is wrong, expired or was removed). Enter a token again.'
        : explain(error),
    );
  }
}

void boot();
