/**
 * The words of an identity verdict (docs/identity.md), on their own: the config schema's
 * `identity` match, the renderers' line and the `_identity` field all take them, and none of them
 * should pull in the lookup code (which loads only when `identity` is configured).
 */

/** In the order a digest counts them. */
export const VERDICTS = ['at_risk', 'rotated', 'disabled', 'no_account', 'unknown'] as const;
export type Verdict = (typeof VERDICTS)[number];

/** Why a verdict is `unknown`: the provider cannot vouch for the password's date, or did not answer. */
export type UnknownReason = 'unmanaged' | 'unavailable';

export const PROVIDER_TYPES = ['entra', 'okta'] as const;
export type ProviderType = (typeof PROVIDER_TYPES)[number];

/** What a person calls each provider. */
export const PROVIDER_LABELS: Record<ProviderType, string> = { entra: 'Entra ID', okta: 'Okta' };

/**
 * A credential's verdict, kept with the item as `_identity` (beside its upstream fields, as
 * `_trimmed` is): what webhook bodies, Splunk events and Sentinel records carry, exactly.
 */
export interface IdentityVerdict {
  /** The provider's name in the config. */
  provider: string;
  verdict: Verdict;
  reason?: UnknownReason;
  userId?: string;
  displayName?: string;
  enabled?: boolean;
  passwordChangedAt?: string;
  /** The leak's date: the source's `breached_at`, else its `leaked_at`, else `imported_at`. */
  leakDate: string;
  /** The automatic response decided with this verdict (`identity.auto`; lib/identity/auto.ts). */
  auto?: AutoNote;
}

/** What `_identity.auto` says: the actions recorded for this account, or why none were taken. */
export type AutoNote =
  /** `dryRun`: a dry run decided these, and took none (lib/identity/auto.ts). */
  | { actions: AccountAction[]; id: string; dryRun?: true }
  /** The hour's `maxPerHour` was reached: nothing taken for this account now. */
  | { paused: true; until: string; maxPerHour: number };

/** How a verdict reads in a sentence: `at risk`, `no account`, `unknown (unmanaged)`. */
export function verdictWords(verdict: Verdict, reason?: UnknownReason): string {
  const words = verdict.replace('_', ' ');
  return verdict === 'unknown' && reason ? `${words} (${reason})` : words;
}

/** What can be done to an account from an alert (docs/identity.md), in the API's words. */
export const ACCOUNT_ACTIONS = [
  'revokeSessions',
  'requirePasswordChange',
  'confirmCompromised',
  'disable',
  'enable',
] as const;
export type AccountAction = (typeof ACCOUNT_ACTIONS)[number];

/** The actions only `identity:disable` (and Slack's `identityAdmins`) may take. */
export const ADMIN_ACTIONS: ReadonlySet<AccountAction> = new Set(['disable', 'enable']);

/** The CLI's words: `identity revoke-sessions <login>...`. */
export const ACTION_COMMANDS: Record<AccountAction, string> = {
  revokeSessions: 'revoke-sessions',
  requirePasswordChange: 'require-password-change',
  confirmCompromised: 'confirm-compromised',
  disable: 'disable',
  enable: 'enable',
};

/** How an action reads in a message: `revoke sessions`. */
export const ACTION_WORDS: Record<AccountAction, string> = {
  revokeSessions: 'revoke sessions',
  requirePasswordChange: 'require a password change',
  confirmCompromised: 'confirm compromised',
  disable: 'disable the account',
  enable: 'enable the account',
};
