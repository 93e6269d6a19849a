/**
 * The MSSP review's table (mssp.test.ts): each route of the API, as `app.routes` lists it, with
 * how a client bound to A (Globex) calls it with B's (Initech's) ids and names, and what "nothing
 * of B's" means for its answer. Longer than 300 lines because it is one table, a row a route,
 * which reads best whole.
 */
import { expect } from 'vitest';
import { PAGE_FILES } from '../../lib/console/page-packed.ts';
import { slackSigned } from '../helpers/slack-api.ts';
import { A, B, type MsspWorld } from './mssp-world.ts';

/** One request of the walk, as client A (or no client) sends it. */
export interface Probe {
  method: string;
  /** Path and query, B's ids percent-encoded where they are a segment. */
  path: string;
  body?: unknown;
  /** Not A's bearer token: Slack's doors, which take a signature. */
  headers?: Record<string, string>;
  status: number;
  /**
   * B's values in the request and what stands in for them in a twin request naming nothing that
   * exists: the two answers must be equal once B's values sent back are replaced by the twin's.
   */
  twin?: [string, string][];
  /** The twin's path where swapping B's values in it would change more than they (an asset id). */
  twinPath?: string;
  /** The part of the answer to look for B's strings in (default: all of it). */
  scan?: (body: Record<string, unknown>) => unknown;
  /** What else "nothing of B's" means for this route's answer. */
  check?: (body: Record<string, unknown>) => void;
}

/** A route's tenant rule as the walk checks it: the probes, or why it has none of its own. */
export type Row = ((w: MsspWorld) => Probe[]) | { middleware: string };

export const NONE = {
  key: `${A.id}:paste/none/1`,
  uid: 'paste/none/2',
  tenant: 'Hooli',
  tenantId: '9999',
  login: 'kim@nowhere.test',
  domain: 'nowhere.test',
};
const form = { 'Content-Type': 'application/x-www-form-urlencoded' };
export const items = (body: Record<string, unknown>) => body.items as Record<string, unknown>[];

/**
 * The audit trail but A's own doings' targets: those are the ids A sent (B's among them, in the
 * walk), which `onlyA` checks were answered as ids that do not exist.
 */
export const othersThanA = (body: Record<string, unknown>) =>
  items(body).map((e) => (e.who === 'a' ? { ...e, target: undefined } : e));

/** Only A's doings, and those that named B's ids ended as those that named nothing that exists. */
export const onlyA = (w: MsspWorld) => (body: Record<string, unknown>) => {
  const entries = items(body);
  expect(entries.filter((e) => e.who !== 'a')).toEqual([]);
  const mentions = mentionsOfB(w);
  const results = (named: (t: string) => boolean) =>
    new Set(entries.filter((e) => named(String(e.target))).map((e) => `${e.what}: ${e.result}`));
  const nothing = results((t) => /none|Hooli|9999|nowhere|0000$/.test(t));
  // B's asset id (a number, looked for only as a whole target) was toggled as A, with A's token.
  const named = (t: string) => mentions(t) !== undefined || t === String(w.b.assetId);
  for (const result of results(named)) expect(nothing).toContain(result);
  return entries.filter((e) => named(String(e.target))).length;
};

/** Every route of the app (method and path, as `app.routes` lists it) and its rule. */
export const ROUTES: Record<string, Row> = {
  'ALL /*': { middleware: 'the request log and 405s: each route’s probes pass through it' },
  'ALL /silences': { middleware: 'the silence dry run: probed under POST /silences?dryRun=true' },
  'GET /health': () => [{ method: 'GET', path: '/health', status: 200 }],
  'GET /openapi.json': () => [{ method: 'GET', path: '/openapi.json', status: 200 }],
  'GET /whoami': () => [
    {
      method: 'GET',
      path: '/whoami',
      status: 200,
      check: (body) => expect((body.grants as { tenants: number[] }[])[0]?.tenants).toEqual([A.id]),
    },
  ],
  'GET /console': () => [{ method: 'GET', path: '/console', status: 200 }],
  'GET /console/:file': () =>
    Object.keys(PAGE_FILES)
      .filter((f) => f !== 'index.html')
      .map((file) => ({ method: 'GET', path: `/console/${file}`, status: 200 })),
  'GET /assets/:asset_id/audit': (w) => [
    {
      method: 'GET',
      path: `/assets/${w.b.assetId}/audit`,
      status: 200,
      // B's asset was toggled as Initech: none of it shows; only A's own toggles of that id could.
      check: (body) => expect(items(body).filter((e) => e.client !== 'a')).toEqual([]),
    },
  ],
  'POST /assets/:asset_id/toggle': (w) => [
    // As A's tenant (its one): with A's token, which reaches only A's assets.
    {
      method: 'POST',
      path: `/assets/${w.b.assetId}/toggle`,
      body: { is_disabled: true },
      status: 404,
      twin: [[String(w.b.assetId), '999999']],
    },
    ...[B.name, B.name.toUpperCase(), String(B.id), ` ${B.id} `].map(
      (tenant): Probe => ({
        method: 'POST',
        path: `/assets/${w.b.assetId}/toggle?tenant=${encodeURIComponent(tenant)}`,
        body: { is_disabled: true },
        status: 404,
        twin: [[tenant, NONE.tenant]],
        twinPath: `/assets/${w.b.assetId}/toggle?tenant=${NONE.tenant}`,
      }),
    ),
  ],
  'GET /alerts': () => [
    {
      method: 'GET',
      path: '/alerts',
      status: 200,
      check: (body) => expect(items(body).every((i) => String(i.key).startsWith(`${A.id}:`))).toBe(true),
    },
    ...[B.name, B.name.toLowerCase(), String(B.id), `0${B.id}`].map(
      (tenant): Probe => ({
        method: 'GET',
        path: `/alerts?tenant=${encodeURIComponent(tenant)}`,
        status: 404,
        twin: [[tenant, NONE.tenant]],
      }),
    ),
  ],
  'GET /alerts/:key': (w) =>
    [
      w.b.key,
      w.b.uid,
      w.b.sharedKey,
      // Another tenant's prefix on either's uid.
      `${B.id}:${w.a.uid}`,
      `${A.id}:${w.b.uid}`,
      w.b.key.toUpperCase(),
    ].map((key) => ({
      method: 'GET',
      path: `/alerts/${encodeURIComponent(key)}`,
      status: 404,
      twin: [[key, NONE.key]],
    })),
  'GET /audit': (w) => [{ method: 'GET', path: '/audit', status: 200, scan: othersThanA, check: onlyA(w) }],
  'GET /silences': () =>
    ['/silences', '/silences?all=true'].map((path) => ({
      method: 'GET',
      path,
      status: 200,
      check: (body) =>
        expect(items(body).every((s) => JSON.stringify(s.match).includes(`[${A.id}]`))).toBe(true),
    })),
  'POST /silences': () => [
    ...[
      { tenants: [B.name] },
      { tenants: [B.name.toLowerCase()] },
      { tenants: [String(B.id)] },
      { tenants: [B.id, A.id] },
      { sources: [`tenant:${B.id}`] },
      { sources: [`group:${B.id}:1`] },
      { sources: [`credentials:${B.id}:${B.domain}`] },
    ].map(
      (match): Probe => ({
        method: 'POST',
        path: '/silences',
        body: { match, until: 'PT1H', reason: 'mssp review' },
        status: 404,
        twin: [
          [B.name, NONE.tenant],
          [B.name.toLowerCase(), NONE.tenant],
          [String(B.id), NONE.tenantId],
          [B.domain, NONE.domain],
        ],
      }),
    ),
    // The top level, which A is not bound to, is as another tenant.
    {
      method: 'POST',
      path: '/silences',
      body: { match: { topLevel: true }, until: 'PT1H', reason: 'mssp review' },
      status: 404,
    },
    // The dry run (the ALL /silences middleware): A's alerts only, and B named is 404.
    {
      method: 'POST',
      path: '/silences?dryRun=true',
      body: { match: {} },
      status: 200,
      check: (body) => expect(body).toEqual({ wouldHold: 2, of: 2 }),
    },
    {
      method: 'POST',
      path: '/silences?dryRun=true',
      body: { match: { sources: [`tenant:${B.id}`] } },
      status: 404,
      twin: [[String(B.id), NONE.tenantId]],
    },
  ],
  'DELETE /silences/:id': (w) =>
    [w.b.silenceId, w.b.sourcesSilenceId, w.b.mixedSilenceId].map((id) => ({
      method: 'DELETE',
      path: `/silences/${id}`,
      status: 404,
      twin: [[id, `${id.slice(0, -4)}0000`]],
    })),
  'GET /status': () => [
    {
      method: 'GET',
      path: '/status',
      status: 200,
      check: (body) => {
        expect(Object.keys(body).sort()).toEqual(['identityProviders', 'streams']);
        const tenants = [...(body.streams as never[]), ...(body.identityProviders as never[])].map(
          (s: { tenant: { id: number } | null }) => s.tenant?.id,
        );
        expect(new Set(tenants)).toEqual(new Set([A.id]));
      },
    },
  ],
  'GET /lookup': () => [
    ...[
      `domain=${B.domain}`,
      `domain=mail.${B.domain}`,
      `account=${B.login}`,
      `account=${B.login.toUpperCase()}`,
      `keyword=*@${B.domain}`,
      `keyword=*.${B.domain}`,
    ].map(
      (query): Probe => ({
        method: 'GET',
        path: `/lookup?${query}`,
        status: 404,
        twin: [
          [B.login.toUpperCase(), NONE.login.toUpperCase()],
          [B.login, NONE.login],
          [B.domain, NONE.domain],
        ],
      }),
    ),
    ...[B.name, String(B.id)].map(
      (tenant): Probe => ({
        method: 'GET',
        path: `/lookup?domain=${A.domain}&tenant=${tenant}`,
        status: 404,
        twin: [[tenant, NONE.tenant]],
      }),
    ),
  ],
  'POST /events/actions': (w) => [
    {
      method: 'POST',
      path: '/events/actions',
      body: {
        action: 'ignore',
        uids: [w.b.key, w.b.uid, w.b.sharedKey, `${B.id}:${w.a.uid}`, `${A.id}:${w.b.uid}`],
      },
      status: 200,
      twin: [
        [w.b.key, `${NONE.key}a`],
        [w.b.sharedKey, `${NONE.key}b`],
        [`${B.id}:${w.a.uid}`, `${NONE.key}c`],
        [`${A.id}:${w.b.uid}`, `${NONE.key}d`],
        [w.b.uid, NONE.uid],
      ],
      check: (body) =>
        expect((body.results as { error?: string }[]).every((r) => r.error === 'not_found')).toBe(true),
    },
  ],
  'POST /identity/actions': () => [
    {
      method: 'POST',
      path: '/identity/actions',
      body: { action: 'revokeSessions', logins: [B.login] },
      status: 200,
      twin: [[B.login, NONE.login]],
    },
    ...[B.name, B.name.toLowerCase(), String(B.id), B.id].map(
      (tenant): Probe => ({
        method: 'POST',
        path: '/identity/actions',
        body: { action: 'disable', logins: [B.login], tenant },
        status: 404,
        twin: [
          [B.login, NONE.login],
          [String(tenant), NONE.tenantId],
        ],
      }),
    ),
  ],
  'GET /identity/actions/:id': (w) => [
    {
      method: 'GET',
      path: `/identity/actions/${encodeURIComponent(w.b.actionId)}`,
      status: 404,
      twin: [[w.b.actionId, `${w.b.actionId.slice(0, -4)}0000`]],
    },
  ],
  'POST /destinations/:name/test': () => [{ method: 'POST', path: '/destinations/hook/test', status: 403 }],
  'POST /deliveries/retry': (w) => [
    {
      method: 'POST',
      path: '/deliveries/retry',
      body: { ids: [w.b.deliveryId] },
      status: 403,
      twin: [[w.b.deliveryId, 'hook#event#none']],
    },
  ],
  // Slack's doors take Slack's signature, not a token: unsigned, or signed with A's token as the
  // secret, a request naming B's item is refused before anything is read.
  'POST /slack/interactions': (w) => {
    const body = `payload=${encodeURIComponent(
      JSON.stringify({
        type: 'block_actions',
        user: { id: 'U0ANA' },
        team: { id: 'T0MSSP' },
        actions: [{ action_id: 'exposure:ignore', block_id: `exposure:${w.b.key}` }],
      }),
    )}`;
    return [form, slackSigned(body, w.tokens.a)].map(
      (headers): Probe => ({ method: 'POST', path: '/slack/interactions', headers, body, status: 401 }),
    );
  },
  'POST /slack/commands': () => [
    {
      method: 'POST',
      path: '/slack/commands',
      headers: form,
      body: `team_id=T0MSSP&user_id=U0ANA&command=%2Fexposure&text=${encodeURIComponent(`lookup ${B.login}`)}`,
      status: 401,
    },
  ],
};

/** Which of B's strings `text` holds (a name in any case, an id, a key, a login), if any. */
export const mentionsOfB = (w: MsspWorld) => {
  const strings = w.bStrings().map((s) => s.toLowerCase());
  return (text: string): string | undefined => {
    const lower = text.toLowerCase();
    const found = strings.find((s) => lower.includes(s));
    if (found) return found;
    return /(?<![\d])1003(?![\d])/.test(text) ? '1003' : undefined;
  };
};
