/**
 * `preview`'s identity answers: a credential in a preview's input may carry, beside its upstream
 * fields, what an identity provider answered for its login (`identityAnswer`). It is checked (each
 * problem named by its path), its provider found in the config, and the verdict decided as a run
 * decides it (lib/identity/verdict.ts, the leak's date from the item), to be set as the item's
 * `_identity` before it is routed. Nothing is asked of a provider.
 */
import * as z from 'zod/mini';
import { UsageError } from '../../errors.ts';
import type { ProviderConfig } from '../../identity/schema.ts';
import { type Answer, decideVerdict, domainOfLogin, leakDateOf, loginOf } from '../../identity/verdict.ts';
import { type IdentityVerdict, PROVIDER_LABELS } from '../../identity/words.ts';
import type { AlertsConfig } from '../../rules/config.ts';
import { domainWithin } from '../../rules/match.ts';
import { checkTimestamp } from '../../rules/timestamp.ts';
import type { Credential } from '../../upstream/schemas.ts';
import { describeIssues } from '../../upstream/validate.ts';

const timestamp = z.string().check(
  z.superRefine((s, ctx) => {
    const checked = checkTimestamp(s);
    if (!checked.ok) ctx.addIssue({ code: 'custom', message: checked.reason, input: s });
  }),
);

const accountSchema = z.strictObject({
  id: z.optional(z.string().check(z.minLength(1))),
  displayName: z.optional(z.string()),
  enabled: z.boolean(),
  passwordChangedAt: z.nullable(timestamp),
  unmanaged: z.optional(z.boolean()),
});

const answerSchema = z
  .strictObject({
    provider: z.optional(z.string().check(z.minLength(1))),
    found: z.optional(z.literal(false)),
    account: z.optional(accountSchema),
    unavailable: z.optional(z.string().check(z.minLength(1))),
  })
  .check(
    z.superRefine((a, ctx) => {
      const given = [a.found !== undefined, a.account !== undefined, a.unavailable !== undefined];
      if (given.filter(Boolean).length !== 1)
        ctx.addIssue({
          code: 'custom',
          message:
            'expected exactly one of "account" (the provider found it), "found": false, or "unavailable" (the lookup failed)',
          input: a,
        });
    }),
  );
type AnswerInput = z.infer<typeof answerSchema>;

/**
 * The item without `identityAnswer`, and the answer checked; a UsageError names the bad path
 * (`item.json [2] identityAnswer.account.enabled: expected a boolean, got "yes"`).
 */
export function takeIdentityAnswer(
  value: Record<string, unknown>,
  where: string,
): { item: Record<string, unknown>; answer?: AnswerInput } {
  if ('_identity' in value)
    throw new UsageError(
      `${where}: _identity: preview decides the verdict itself; give what the provider answered as "identityAnswer" (exposure-alerts preview --help)`,
    );
  if (!('identityAnswer' in value)) return { item: value };
  const { identityAnswer, ...item } = value;
  const parsed = z.object({ identityAnswer: answerSchema }).safeParse({ identityAnswer });
  if (!parsed.success) {
    const problems = describeIssues(parsed.error.issues, { identityAnswer }).map(
      (i) => `${i.path || 'identityAnswer'}: ${i.message}`,
    );
    throw new UsageError(`${where}: ${problems.join('; ')} (exposure-alerts preview --help shows the shape)`);
  }
  return { item, answer: parsed.data.identityAnswer };
}

interface Found {
  name: string;
  provider: ProviderConfig;
}

/** Every provider of the config, the top level's first, then each tenant's own. */
function providersOf(config: AlertsConfig): Found[] {
  return [config.identity, ...(config.tenants ?? []).map((t) => t.identity)].flatMap((identity) =>
    Object.entries(identity?.providers ?? {}).map(([name, provider]) => ({ name, provider })),
  );
}

/**
 * The verdict `answer` gives `credential`, as a run decides it; `warn` hears of a login a run
 * would not look up in that provider. A UsageError names `identityAnswer.provider` when no
 * provider of the config fits.
 */
export function previewVerdict(
  credential: Credential,
  answer: AnswerInput,
  config: AlertsConfig,
  where: string,
  warn: (text: string) => void,
): IdentityVerdict {
  const all = providersOf(config);
  const login = loginOf(credential);
  const covers = (p: Found) => p.provider.domains.some((d) => domainWithin(domainOfLogin(login), d));
  if (all.length === 0)
    throw new UsageError(
      `${where}: identityAnswer: the config has no identity providers to answer for ${login}`,
    );
  let chosen: Found | undefined;
  if (answer.provider !== undefined) {
    chosen = all.find((p) => p.name === answer.provider);
    if (!chosen)
      throw new UsageError(
        `${where}: identityAnswer.provider: no identity provider named ${JSON.stringify(answer.provider)} in the config (it has: ${[...new Set(all.map((p) => p.name))].join(', ')})`,
      );
    if (!covers(chosen))
      warn(
        `${where}: ${login} is outside ${chosen.name}'s domains (${chosen.provider.domains.join(', ')}): a run would not look it up there; previewed as if it did`,
      );
  } else {
    chosen = all.find(covers);
    if (!chosen)
      throw new UsageError(
        `${where}: identityAnswer.provider: ${login} is outside every provider's domains (a run gives it no verdict); name the provider to preview one anyway`,
      );
  }
  const decided: Answer =
    answer.unavailable !== undefined
      ? { unavailable: answer.unavailable }
      : answer.account
        ? {
            found: true,
            account: {
              id: answer.account.id ?? login,
              ...(answer.account.displayName ? { displayName: answer.account.displayName } : {}),
              enabled: answer.account.enabled,
              passwordChangedAt: answer.account.passwordChangedAt,
              unmanaged: answer.account.unmanaged ?? false,
            },
          }
        : { found: false };
  return decideVerdict(chosen.name, decided, leakDateOf(credential));
}

/** What a line calls a provider (`Entra ID corp`), as runs label it. */
export function identityLabelFor(
  config: AlertsConfig,
): (tenant: number | undefined, provider: string) => string {
  return (tenant, provider) => {
    const scope =
      tenant === undefined ? config.identity : config.tenants?.find((t) => t.id === tenant)?.identity;
    const found =
      scope?.providers[provider] ?? providersOf(config).find((p) => p.name === provider)?.provider;
    return found ? `${PROVIDER_LABELS[found.type]} ${provider}` : provider;
  };
}
