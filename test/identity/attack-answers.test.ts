/**
 * Malformed provider answers, tried as an adversary would (issue 46's "unreadable is unknown",
 * attacked): a search that answers a user of another login, a 404 that is not the provider's own
 * before a search that finds no one, a body larger than any account, fields of the wrong type, a
 * token endpoint's nonsense. Each is `unknown` (`unavailable`), never `no_account`, never a thrown
 * error. Real clients over HTTP against the stand-ins, the lookup step's store on dynalite.
 */
import { describe, expect, it } from 'vitest';
import type { IdentityFault } from '../../lib/emulator/identity/index.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { lookupWorld, useStandInClients } from '../helpers/identity-lookup.ts';

const db = useDynalite();
const standIn = useStandInClients({
  entra: {
    users: [
      { userPrincipalName: 'kim@acme.com', lastPasswordChangeDateTime: '2026-01-01T00:00:00Z' },
      // Found by its UPN only: its mail is another address.
      { userPrincipalName: 'lee@acme.com', mail: 'lee.park@acme.com' },
    ],
  },
  okta: { users: [{ login: 'kim@acme.io' }, { login: 'a/b@acme.io' }] },
});

/** The verdict of one new leak of `login`, in a new cycle of a new run on a new table. */
const verdict = async (login: string) =>
  (await lookupWorld(db, [standIn.entra, standIn.okta])).verdict(login);

const oktaUser = (login: string) =>
  JSON.stringify({ id: '00u9', status: 'ACTIVE', passwordChanged: null, profile: { login } });
const graphUser = (upn: string, mail: string) =>
  JSON.stringify({ id: 'u9', accountEnabled: true, userPrincipalName: upn, mail, displayName: 'Other' });

const CASES: [string, string, IdentityFault[]][] = [
  // First: the Entra client has bought no token yet (a token is kept for the process).
  ['Entra: a token endpoint answering null', 'kim@acme.com', [{ endpoint: 'entraToken', raw: 'null' }]],
  [
    'Entra: a token endpoint answering HTML',
    'kim@acme.com',
    [{ endpoint: 'entraToken', raw: '<html></html>' }],
  ],
  [
    'Okta: a filter search answering a user of another login',
    'a/b@acme.io',
    [{ provider: 'okta', endpoint: 'oktaUser', raw: `[${oktaUser('someone.else@acme.io')}]` }],
  ],
  [
    'Okta: a user read answering a user of another login',
    'kim@acme.io',
    [{ provider: 'okta', endpoint: 'oktaUser', raw: oktaUser('someone.else@acme.io') }],
  ],
  [
    'Entra: a mail search answering a user of another mail',
    'lee@acme.com',
    [
      { endpoint: 'graphUser', status: 404 },
      { endpoint: 'graphUsers', raw: `{"value":[${graphUser('x@acme.com', 'x@acme.com')}]}` },
    ],
  ],
  [
    'Entra: a user read answering a user of another UPN',
    'kim@acme.com',
    [{ endpoint: 'graphUser', raw: graphUser('x@acme.com', 'x@acme.com') }],
  ],
  [
    'Entra: a 404 that is not Graph’s own (a proxy’s page), then a search that finds no such mail',
    'lee@acme.com',
    [{ endpoint: 'graphUser', status: 404, raw: '<html>Not Found</html>' }],
  ],
  [
    'Entra: {"value": [{}]}',
    'lee@acme.com',
    [
      { endpoint: 'graphUser', status: 404 },
      { endpoint: 'graphUsers', raw: '{"value":[{}]}' },
    ],
  ],
  ['Entra: an empty 200', 'kim@acme.com', [{ endpoint: 'graphUser', raw: '' }]],
  [
    'Entra: truncated JSON',
    'kim@acme.com',
    [{ endpoint: 'graphUser', raw: '{"id":"u1","accountEnabled":tr' }],
  ],
  [
    'Okta: an HTML page with 200',
    'kim@acme.io',
    [{ provider: 'okta', endpoint: 'oktaUser', raw: '<!doctype html><p>Sign in</p>' }],
  ],
  [
    'Okta: [null] to a filter search',
    'a/b@acme.io',
    [{ provider: 'okta', endpoint: 'oktaUser', raw: '[null]' }],
  ],
  [
    'Okta: an id that is a number',
    'kim@acme.io',
    [
      {
        provider: 'okta',
        endpoint: 'oktaUser',
        raw: '{"id":9,"status":"ACTIVE","passwordChanged":null,"profile":{"login":"kim@acme.io"}}',
      },
    ],
  ],
];

describe('malformed answers, attacked', () => {
  it.each(CASES)('%s: unknown/unavailable', async (_name, login, faults) => {
    standIn.idp.stand.control.clearFaults();
    for (const fault of faults) standIn.idp.stand.control.addFault({ provider: 'entra', ...fault });
    expect(await verdict(login)).toBe('unknown/unavailable');
    expect(standIn.idp.stand.control.pendingFaults()).toHaveLength(0);
  });

  it('a user whose display name is larger than any account’s: read, the cycle goes on, nothing fails', async () => {
    standIn.idp.stand.control.clearFaults();
    const huge = JSON.stringify({
      id: 'u1',
      accountEnabled: true,
      userPrincipalName: 'kim@acme.com',
      mail: 'kim@acme.com',
      displayName: 'K'.repeat(600_000),
    });
    standIn.idp.stand.control.addFault({ provider: 'entra', endpoint: 'graphUser', raw: huge });
    expect(await verdict('kim@acme.com')).toMatch(/^(at_risk|unknown\/unavailable)$/);
  });

  it('an error whose code is larger than any code: unknown, the cycle goes on', async () => {
    for (const [provider, endpoint, body, login] of [
      ['entra', 'graphUser', { error: { code: 'E'.repeat(600_000) } }, 'kim@acme.com'],
      ['okta', 'oktaUser', { errorCode: 'E'.repeat(600_000) }, 'kim@acme.io'],
    ] as const) {
      standIn.idp.stand.control.clearFaults();
      standIn.idp.stand.control.addFault({ provider, endpoint, status: 500, body });
      expect(await verdict(login), provider).toBe('unknown/unavailable');
    }
  });

  it('the stand-ins as they are: the verdicts these cases must not mask', async () => {
    standIn.idp.stand.control.clearFaults();
    expect(await verdict('lee@acme.com')).toBe('at_risk');
    expect(await verdict('a/b@acme.io')).toBe('at_risk');
    expect(await verdict('kim@acme.io')).toBe('at_risk');
  });
});
