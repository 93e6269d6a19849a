/**
 * A credential's verdict from its provider's answer (docs/identity.md), pure: the first of
 * five rules that holds decides. Dates alone: nothing here, nor anywhere in lib/identity, sends a
 * password or a hash to a provider or signs in.
 */
import type { Credential } from '../upstream/schemas.ts';
import type { IdentityVerdict, UnknownReason } from './words.ts';

/** What a provider said of one login, as the table keeps it for an hour (`unavailable` 5 minutes). */
export type Answer =
  | { found: false }
  | { found: true; account: Account }
  /** The lookup failed, was refused, timed out, or was never made (the cycle's lookups ran out). */
  | { unavailable: string };

export interface Account {
  id: string;
  displayName?: string;
  /** Whether the account can sign in (Entra `accountEnabled`; Okta a status other than the four). */
  enabled: boolean;
  /** When its password last changed; null when never (Okta). */
  passwordChangedAt: string | null;
  /** The provider cannot vouch for the password's date (synced from on-premises, a delegated provider). */
  unmanaged: boolean;
}

/** The leak's date: the source's `breached_at`, else its `leaked_at`, else the credential's `imported_at`. */
export function leakDateOf(credential: Credential): string {
  return credential.source?.breached_at || credential.source?.leaked_at || credential.imported_at;
}

/** The login a credential names, as a provider knows it: a bare name is `<name>@<domain>`. */
export function loginOf(credential: Pick<Credential, 'identity_name' | 'domain'>): string {
  const name = credential.identity_name.trim();
  return name.includes('@') ? name : `${name}@${credential.domain.trim().replace(/\.$/, '')}`;
}

/** The domain of a login (after its last `@`), lower-cased. */
export function domainOfLogin(login: string): string {
  return login
    .slice(login.lastIndexOf('@') + 1)
    .toLowerCase()
    .replace(/\.$/, '');
}

const after = (a: string, b: string) => {
  const x = Date.parse(a);
  const y = Date.parse(b);
  return Number.isFinite(x) && Number.isFinite(y) && x >= y;
};

/** The verdict of `answer` for a leak of `leakDate`, by section 12's five rules in order. */
export function decideVerdict(provider: string, answer: Answer, leakDate: string): IdentityVerdict {
  if ('unavailable' in answer) return unknown(provider, 'unavailable', leakDate);
  if (answer.found === false) return { provider, verdict: 'no_account', leakDate };
  // Only a clear "none" is no_account: an answer without its account (a kept one that cannot be read) says nothing.
  if (answer.found !== true || !answer.account) return unknown(provider, 'unavailable', leakDate);
  const { account } = answer;
  const about = {
    provider,
    userId: account.id,
    ...(account.displayName ? { displayName: account.displayName } : {}),
    enabled: account.enabled,
    ...(account.passwordChangedAt ? { passwordChangedAt: account.passwordChangedAt } : {}),
    leakDate,
  };
  if (!account.enabled) return { ...about, verdict: 'disabled' };
  if (account.unmanaged) return { ...about, verdict: 'unknown', reason: 'unmanaged' };
  if (account.passwordChangedAt && after(account.passwordChangedAt, leakDate))
    return { ...about, verdict: 'rotated' };
  return { ...about, verdict: 'at_risk' };
}

export function unknown(provider: string, reason: UnknownReason, leakDate: string): IdentityVerdict {
  return { provider, verdict: 'unknown', reason, leakDate };
}
