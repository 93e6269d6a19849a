/**
 * Leaked logins with identity verdicts (docs/identity.md), for the tests of how every kind
 * shows them: one login of each verdict, display names written by an attacker, and the label a
 * deployment's config gives each provider.
 */
import type { IdentityVerdict } from '../../lib/identity/words.ts';
import type { DeliveryAlert } from '../../lib/model.ts';
import type { RenderOptions } from '../../lib/render/types.ts';
import type { Credential } from '../../lib/upstream/schemas.ts';
import { credentialAlert, makeCredential, renderOptions, toDelivery } from '../render/fixtures.ts';

/**
 * Display names a directory may hold, since anyone can set their own. The first is over the 60
 * characters a line shows of a name (so it is clipped, mid-link); the others fit.
 */
export const HOSTILE_NAMES = [
  '<!channel> @here <https://evil|x> *bold* @everyone [x](http://e) <script>',
  '@everyone [x](http://e) <script>',
  '<@U123> <users/all> ||s|| `tick` <!here|x>',
  'Eve\nLogin: forged@evil.example',
  '\u202Eevil\u001b[31m red\u0007 ![i](https://evil/i.png)',
] as const;

const LEAK = '2026-11-20T08:00:00Z';

/** One verdict of each kind (and both reasons for `unknown`), in VERDICTS order. */
export const VERDICT_SAMPLES: IdentityVerdict[] = [
  {
    provider: 'corp',
    verdict: 'at_risk',
    userId: 'u-1',
    displayName: HOSTILE_NAMES[0],
    enabled: true,
    passwordChangedAt: '2026-03-01T00:00:00Z',
    leakDate: LEAK,
  },
  {
    provider: 'corp',
    verdict: 'rotated',
    userId: 'u-2',
    displayName: HOSTILE_NAMES[1],
    enabled: true,
    passwordChangedAt: '2026-11-21T09:00:00Z',
    leakDate: LEAK,
  },
  {
    provider: 'shop',
    verdict: 'disabled',
    userId: 'u-3',
    displayName: HOSTILE_NAMES[2],
    enabled: false,
    leakDate: LEAK,
  },
  { provider: 'shop', verdict: 'no_account', leakDate: LEAK },
  {
    provider: 'corp',
    verdict: 'unknown',
    reason: 'unmanaged',
    userId: 'u-5',
    displayName: HOSTILE_NAMES[3],
    enabled: true,
    leakDate: LEAK,
  },
  {
    provider: 'corp',
    verdict: 'unknown',
    reason: 'unavailable',
    displayName: HOSTILE_NAMES[4],
    leakDate: LEAK,
  },
];

/** What the config calls each provider (`Entra ID corp`). */
export const identityLabel: RenderOptions['identityLabel'] = (_tenant, provider) =>
  provider === 'corp' ? 'Entra ID corp' : provider === 'shop' ? 'Okta shop' : undefined;

/** A leaked login carrying `verdict` as its `_identity`, as the poll leaves it on the item. */
export function withVerdict(
  verdict: IdentityVerdict | undefined,
  over: Partial<Credential> = {},
): DeliveryAlert {
  const item = makeCredential(over);
  return toDelivery(credentialAlert(verdict ? { ...item, _identity: verdict } : item));
}

/** One login of each sample verdict, all of one domain and leak (one group, or one digest). */
export const eachVerdict = (): DeliveryAlert[] => VERDICT_SAMPLES.map((v) => withVerdict(v));

/**
 * A digest's logins: 3 at risk, 2 rotated, 1 disabled, 1 no account, 2 unknown, and 2 without a
 * verdict (a login outside every provider's domains), mixed.
 */
export function mixedDigest(): { alerts: DeliveryAlert[]; counts: string } {
  const [risk, rotated, disabled, none, unmanaged, unavailable] = VERDICT_SAMPLES;
  const order = [
    risk,
    undefined,
    rotated,
    risk,
    disabled,
    none,
    unmanaged,
    risk,
    undefined,
    rotated,
    unavailable,
  ];
  return {
    alerts: order.map((v) => withVerdict(v)),
    counts: '3 at risk, 2 rotated, 1 disabled, 1 no account, 2 unknown',
  };
}

/** Options for one message per group (`single`) or a digest of everything (`digest`). */
export const single = renderOptions({ digest: { threshold: 100, maxItems: 20 }, identityLabel });
export const digest = renderOptions({ digest: { threshold: 1, maxItems: 20 }, identityLabel });
