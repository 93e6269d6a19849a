/**
 * The demo directory: accounts made from the emulator's own leaked logins, so that `npm start`'s
 * credential alerts meet every verdict (docs/identity.md) with nothing configured.
 *
 * For each provider (demo-providers.ts), the logins of its domain (and subdomains) are taken newest
 * leak first, and each is given the next case of {@link CYCLE}: an account whose password changed
 * before its first leak (at risk; for Okta sometimes never changed), after its last leak
 * (rotated), one that cannot sign in (disabled), none at all (no account), or one whose password
 * lives elsewhere (synced from on-premises AD; a non-Okta credentials provider: unknown). The first
 * five logins already hold every case, so any lookback that finds five leaked logins of a domain
 * shows them all. The leak's date is the product's (lib/identity/verdict.ts `leakDateOf`), and
 * everything is drawn from the dataset's seed, so the same seed gives the same directory.
 */

import { leakDateOf } from '../../identity/verdict.ts';
import type { Credential } from '../../upstream/schemas.ts';
import type { Dataset } from '../dataset.ts';
import { emailInDomain, globalCredential } from '../identities.ts';
import { createRandom, type Random } from '../random.ts';
import { DEMO_ENTRA, DEMO_OKTA } from './demo-providers.ts';
import { ALL_ENTRA_ROLES, type EntraUserInput, nameFromLogin } from './entra.ts';
import type { IdentityStandInOptions } from './index.ts';
import type { OktaProviderType, OktaStatus, OktaUserInput } from './okta.ts';

export type DemoCase = 'at_risk' | 'rotated' | 'disabled' | 'no_account' | 'unmanaged';

/** Every case in the first five; then more of the common ones, as a real directory has. */
export const CYCLE: readonly DemoCase[] = [
  'at_risk',
  'rotated',
  'disabled',
  'no_account',
  'unmanaged',
  'rotated',
  'at_risk',
  'rotated',
];

const DAY = 86_400_000;

export interface DemoLogin {
  login: string;
  case: DemoCase;
  /** The earliest and latest leak dates among the login's credentials. */
  firstLeak: number;
  lastLeak: number;
}

/** The logins of `domain` in the dataset, newest leak first, each with its case. */
export function demoLogins(dataset: Dataset, domain: string): DemoLogin[] {
  const byLogin = new Map<string, { login: string; newest: number; firstLeak: number; lastLeak: number }>();
  for (const credential of dataset.credentials) {
    const login = credential.identity_name;
    if (!login.includes('@') || !emailInDomain(login, domain)) continue;
    const leak = Date.parse(leakDateOf(globalCredential(dataset, credential) as unknown as Credential));
    const imported = Date.parse(credential.imported_at);
    const key = login.toLowerCase();
    const seen = byLogin.get(key);
    if (!seen) byLogin.set(key, { login, newest: imported, firstLeak: leak, lastLeak: leak });
    else {
      seen.newest = Math.max(seen.newest, imported);
      seen.firstLeak = Math.min(seen.firstLeak, leak);
      seen.lastLeak = Math.max(seen.lastLeak, leak);
    }
  }
  return [...byLogin.values()]
    .sort((a, b) => b.newest - a.newest || a.login.localeCompare(b.login))
    .map((entry, i) => ({
      login: entry.login,
      case: CYCLE[i % CYCLE.length] as DemoCase,
      firstLeak: entry.firstLeak,
      lastLeak: entry.lastLeak,
    }));
}

const iso = (ms: number) => new Date(ms).toISOString();

/** A GUID drawn from `r` (an object id in the demo directory). */
function guid(r: Random): string {
  const hex = r.hex(32);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
}

/** When the password changed, for a case: before the first leak, or after the last (never after now). */
function changedAt(r: Random, login: DemoLogin, anchor: number): number {
  // On or after the leak even when the leak is recent (then changed the day of it).
  if (login.case === 'rotated')
    return Math.max(login.lastLeak, Math.min(login.lastLeak + r.int(1, 90) * DAY, anchor - DAY));
  return login.firstLeak - r.int(20, 300) * DAY;
}

function entraUser(dataset: Dataset, login: DemoLogin, index: number): EntraUserInput {
  const r = createRandom(`${dataset.seed}:entra:${login.login.toLowerCase()}`);
  const changed = changedAt(r, login, dataset.anchor);
  const name = nameFromLogin(login.login);
  const local = login.login.slice(0, login.login.lastIndexOf('@'));
  return {
    id: guid(r),
    // Every eighth account signs in as <name>@<tenant>.onmicrosoft.com and has the leaked login as
    // its mail only: a UPN lookup misses it, `mail eq '…'` finds it.
    userPrincipalName: index % CYCLE.length === 7 ? `${local}@${DEMO_ENTRA.tenantDomain}` : login.login,
    mail: login.login,
    // One display name as hostile as upstream text can be: a provider's text is escaped like it.
    displayName: index === 5 ? `${name.display} <!channel> @everyone` : name.display,
    givenName: name.first,
    surname: name.last,
    createdDateTime: iso(Math.min(changed, login.firstLeak) - r.int(30, 900) * DAY),
    lastPasswordChangeDateTime: iso(changed),
    accountEnabled: login.case !== 'disabled',
    onPremisesSyncEnabled: login.case === 'unmanaged' ? true : null,
  };
}

const AT_RISK_STATUSES: readonly OktaStatus[] = [
  'ACTIVE',
  'ACTIVE',
  'PASSWORD_EXPIRED',
  'LOCKED_OUT',
  'RECOVERY',
];
const DISABLED_STATUSES: readonly OktaStatus[] = ['SUSPENDED', 'DEPROVISIONED', 'STAGED'];
const DELEGATED: readonly OktaProviderType[] = ['ACTIVE_DIRECTORY', 'LDAP', 'FEDERATION'];

function oktaUser(dataset: Dataset, login: DemoLogin): OktaUserInput {
  const r = createRandom(`${dataset.seed}:okta:${login.login.toLowerCase()}`);
  const changed = changedAt(r, login, dataset.anchor);
  const created = Math.min(changed, login.firstLeak) - r.int(30, 900) * DAY;
  const status: OktaStatus =
    login.case === 'at_risk'
      ? r.pick(AT_RISK_STATUSES)
      : login.case === 'disabled'
        ? r.pick(DISABLED_STATUSES)
        : 'ACTIVE';
  return {
    id: `00u${r.hex(17)}`,
    login: login.login,
    status,
    created: iso(created),
    // Okta says null when the password was never changed: half the accounts at risk are those.
    passwordChanged: login.case === 'at_risk' && r.chance(0.5) ? null : iso(changed),
    lastLogin: status === 'STAGED' ? null : iso(dataset.anchor - r.int(1, 30) * DAY),
    providerType: login.case === 'unmanaged' ? r.pick(DELEGATED) : 'OKTA',
  };
}

/**
 * The stand-in's options for the demo: both providers as demo-providers.ts names them, every
 * permission granted and the user-risk API on (so every action can be tried), and the directory.
 */
export function demoIdentityOptions(dataset: Dataset): Omit<IdentityStandInOptions, 'now'> {
  const entraLogins = demoLogins(dataset, DEMO_ENTRA.domain);
  const oktaLogins = demoLogins(dataset, DEMO_OKTA.domain);
  return {
    entra: {
      tenantId: DEMO_ENTRA.tenantId,
      tenantDomains: [DEMO_ENTRA.tenantDomain],
      clientId: DEMO_ENTRA.clientId,
      clientSecret: DEMO_ENTRA.clientSecret,
      roles: [...ALL_ENTRA_ROLES],
      users: entraLogins.flatMap((login, i) =>
        login.case === 'no_account' ? [] : [entraUser(dataset, login, i)],
      ),
    },
    okta: {
      token: DEMO_OKTA.token,
      userRisk: true,
      users: oktaLogins.flatMap((login) => (login.case === 'no_account' ? [] : [oktaUser(dataset, login)])),
    },
  };
}
