/**
 * Unreadable is unknown (section 12, issue 46 defect 6): an answer the product cannot read as the
 * provider documents it (not JSON, a 200 without the user or the list it must hold, a field of the
 * wrong type) is a failed lookup, `unknown` (`unavailable`) kept 5 minutes, never `no_account` kept
 * an hour. Only a well-formed "none" (Graph's `{"value": []}`, Okta's 404 E0000007 or an empty
 * filter search) is `no_account`. Real clients over HTTP against the stand-ins, the step's store on
 * dynalite with an injected clock.
 */
import { describe, expect, it } from 'vitest';
import type { IdentityFault } from '../../lib/emulator/identity/index.ts';
import { type Answer, decideVerdict } from '../../lib/identity/verdict.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { lookupWorld, useStandInClients } from '../helpers/identity-lookup.ts';

const db = useDynalite();
const standIn = useStandInClients({
  entra: {
    users: [{ userPrincipalName: 'kim@acme.com', lastPasswordChangeDateTime: '2026-01-01T00:00:00Z' }],
  },
  okta: { users: [{ login: 'kim@acme.io' }, { login: 'a/b@acme.io' }] },
});

/** A lookup step on a new table; its verdict() is one new leak's in a new cycle of a new run. */
const world = () => lookupWorld(db, [standIn.entra, standIn.okta]);

/** Faults for one lookup: the answers it gets. */
const CASES: [string, string, IdentityFault[]][] = [
  ['Entra: a user read answering null', 'kim@acme.com', [{ endpoint: 'graphUser', raw: 'null' }]],
  [
    'Entra: a user read that is not JSON',
    'kim@acme.com',
    [{ endpoint: 'graphUser', raw: '<html>ok</html>' }],
  ],
  [
    'Entra: a mail search answering {} after a 404',
    'kim@acme.com',
    [
      { endpoint: 'graphUser', status: 404 },
      { endpoint: 'graphUsers', raw: '{}' },
    ],
  ],
  [
    'Entra: a mail search whose value is null',
    'kim@acme.com',
    [
      { endpoint: 'graphUser', status: 404 },
      { endpoint: 'graphUsers', raw: '{"value":null}' },
    ],
  ],
  [
    'Entra: a user whose accountEnabled is not a boolean',
    'kim@acme.com',
    [{ endpoint: 'graphUser', raw: '{"id":"u1","accountEnabled":"true"}' }],
  ],
  [
    'Entra: a user whose password date is not a date',
    'kim@acme.com',
    [
      {
        endpoint: 'graphUser',
        raw: '{"id":"u1","accountEnabled":true,"lastPasswordChangeDateTime":1700000000}',
      },
    ],
  ],
  [
    'Okta: a user read answering null',
    'kim@acme.io',
    [{ provider: 'okta', endpoint: 'oktaUser', raw: 'null' }],
  ],
  ['Okta: a user read answering []', 'kim@acme.io', [{ provider: 'okta', endpoint: 'oktaUser', raw: '[]' }]],
  [
    'Okta: a 404 that is not Okta’s E0000007 (a wrong orgUrl)',
    'kim@acme.io',
    [{ provider: 'okta', endpoint: 'oktaUser', status: 404, raw: '<html>Not Found</html>' }],
  ],
  [
    'Okta: a user whose status is none Okta has',
    'kim@acme.io',
    [{ provider: 'okta', endpoint: 'oktaUser', raw: '{"id":"00u1","status":7,"passwordChanged":null}' }],
  ],
  [
    'Okta: a user whose passwordChanged is a number',
    'kim@acme.io',
    [{ provider: 'okta', endpoint: 'oktaUser', raw: '{"id":"00u1","status":"ACTIVE","passwordChanged":5}' }],
  ],
  [
    'Okta: a filter search answering null',
    'a/b@acme.io',
    [{ provider: 'okta', endpoint: 'oktaUser', raw: 'null' }],
  ],
];

describe('an answer the product cannot read', () => {
  it.each(CASES)(
    '%s: unknown/unavailable, kept 5 minutes, then looked up again',
    async (_name, login, faults) => {
      const w = await world();
      standIn.idp.stand.control.clearFaults();
      for (const fault of faults) standIn.idp.stand.control.addFault({ provider: 'entra', ...fault });
      expect(await w.verdict(login)).toBe('unknown/unavailable');
      expect(standIn.idp.stand.control.pendingFaults()).toHaveLength(0);
      // Kept 5 minutes, not an hour: after 6, the login is asked again, and its account is found.
      w.clock.advance(4 * 60_000);
      const before = standIn.idp.requests.length;
      expect(await w.verdict(login)).toBe('unknown/unavailable');
      expect(standIn.idp.requests.length).toBe(before);
      w.clock.advance(2 * 60_000);
      expect(await w.verdict(login)).toMatch(/^at_risk|rotated$/);
    },
  );
});

describe('a kept answer that cannot be read', () => {
  it('is unknown/unavailable, not no_account', () => {
    for (const answer of [{}, { found: true }, { found: 'no' }])
      expect(decideVerdict('corp', answer as Answer, '2026-11-20T00:00:00Z')).toMatchObject({
        verdict: 'unknown',
        reason: 'unavailable',
      });
    expect(decideVerdict('corp', { found: false }, '2026-11-20T00:00:00Z').verdict).toBe('no_account');
  });
});

describe('a well-formed answer that there is none', () => {
  it('is no_account: Graph’s empty list, Okta’s 404 E0000007 and its empty filter search', async () => {
    const w = await world();
    standIn.idp.stand.control.clearFaults();
    expect(await w.verdict('nobody@acme.com')).toBe('no_account');
    expect(await w.verdict('nobody@acme.io')).toBe('no_account');
    expect(await w.verdict('x/y@acme.io')).toBe('no_account');
    const last = standIn.idp.requests.filter((r) => r.endpoint === 'graphUsers').at(-1);
    expect(last?.status).toBe(200);
  });
});
