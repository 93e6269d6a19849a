/**
 * Where the identity providers' credentials are read: they can disable accounts, so on AWS they
 * live in a secret of their own (IDENTITY_SECRET_ID) that only the workers may read, while the API's
 * function reads the main secret (SECRET_ID) only. Locally one SECRETS_FILE holds both.
 *
 * An upgrade must never stop lookups or alerts: a provider's name not yet moved to the identity
 * secret is still read from the main secret, and each cold start says so once per name (the name,
 * never its value), pointing at the move (docs/deploy.md). `config validate --secrets` uses
 * {@link providerSecretRefs} to say which name belongs in which secret.
 */
import { ConfigError } from '../errors.ts';
import { loadSecrets, type SecretObject } from '../secrets.ts';

/** Where docs/deploy.md says how a deployment moves its providers' credentials to their own secret. */
export const TWO_SECRETS_DOC = 'docs/deploy.md#moving-to-two-secrets';

type Ref = { secret: string };
type Providers = Record<string, { type: string; clientSecret?: Ref; token?: Ref }>;
/** The parts of a config that name the providers' secrets (structural: a parsed or a raw config). */
export interface ProviderScopes {
  identity?: { providers: Providers } | undefined;
  tenants?: { identity?: { providers: Providers } | undefined }[] | undefined;
}

/** One `{ "secret": NAME }` of a provider, with its path as `config validate` names it. */
export interface ProviderSecretRef {
  path: string;
  name: string;
}

/**
 * Every provider's secret reference, the top level's first, then each tenant's.
 *
 * @example
 * providerSecretRefs(config) // [{ path: 'identity.providers.corp.clientSecret', name: 'corpSecret' }]
 */
export function providerSecretRefs(config: ProviderScopes): ProviderSecretRef[] {
  const refs = (at: string, providers: Providers = {}) =>
    Object.entries(providers).flatMap(([name, p]) => {
      const key = p.type === 'entra' ? 'clientSecret' : 'token';
      const ref = p[key];
      return typeof ref?.secret === 'string'
        ? [{ path: `${at}identity.providers.${name}.${key}`, name: ref.secret }]
        : [];
    });
  return [
    ...refs('', config.identity?.providers),
    ...(config.tenants ?? []).flatMap((t, i) => refs(`tenants[${i}].`, t.identity?.providers)),
  ];
}

/** The names the identity secret holds for this config, sorted, once each. */
export function identitySecretNames(config: ProviderScopes): string[] {
  return [...new Set(providerSecretRefs(config).map((r) => r.name))].sort();
}

/** Every `{ "secret": NAME }` of a config with its path, in the order of the config. */
function secretRefs(value: unknown, path: string, out: ProviderSecretRef[] = []): ProviderSecretRef[] {
  if (Array.isArray(value)) for (const [i, v] of value.entries()) secretRefs(v, `${path}[${i}]`, out);
  else if (value && typeof value === 'object') {
    const entries = Object.entries(value);
    const [only] = entries;
    if (entries.length === 1 && only?.[0] === 'secret' && typeof only[1] === 'string')
      out.push({ path, name: only[1] });
    else for (const [key, v] of entries) secretRefs(v, path ? `${path}.${key}` : key, out);
  }
  return out;
}

/**
 * Which secret each name of a config belongs in: the providers' in the identity secret, every
 * other in the main one (a name a provider shares with a destination, in both). Sorted, once each.
 *
 * @example
 * secretPlaces(config) // { main: ['socSlackWebhook'], identity: ['corpSecret', 'shopToken'] }
 */
export function secretPlaces(config: ProviderScopes): { main: string[]; identity: string[] } {
  const providers = new Set(providerSecretRefs(config).map((r) => r.path));
  const main = secretRefs(config, '').filter((r) => !providers.has(r.path));
  return { main: [...new Set(main.map((r) => r.name))].sort(), identity: identitySecretNames(config) };
}

const usable = (value: unknown) => typeof value === 'string' && value !== '';

/**
 * The secret object to build the providers' clients from: with IDENTITY_SECRET_ID, each provider's
 * name from the identity secret, else (not yet moved) from `main` with a warning; without it,
 * `main` as it is. An identity secret that cannot be read stops the start only when a provider's
 * name is found nowhere else.
 *
 * @example
 * const secrets = await identitySecrets(env, await loadSecrets(env), config, warn);
 */
export async function identitySecrets(
  source: { identitySecretId?: string },
  main: SecretObject,
  config: ProviderScopes,
  warn: (text: string) => void,
  options: { fetchSecret?: (id: string) => Promise<string> } = {},
): Promise<SecretObject> {
  const id = source.identitySecretId;
  const names = identitySecretNames(config);
  if (!id || !names.length) return main;
  let own: SecretObject = {};
  try {
    own = await loadSecrets({ secretId: id }, options);
  } catch (error) {
    const why = `IDENTITY_SECRET_ID ${id} cannot be read (${(error as Error).name}: ${(error as Error).message})`;
    if (!names.every((name) => usable(main[name])))
      throw new ConfigError(`${why}: it holds the identity providers' credentials`);
    warn(`${why}; the identity providers' credentials are read from the main secret (SECRET_ID) instead`);
  }
  const out = { ...main };
  for (const name of names) {
    if (usable(own[name])) out[name] = own[name];
    else if (usable(main[name]))
      warn(
        `identity provider secret "${name}" is not in the identity secret (IDENTITY_SECRET_ID) yet: read from the main secret (SECRET_ID), which the API's function can read too. Move it: ${TWO_SECRETS_DOC}`,
      );
  }
  return out;
}

/** The config without its providers' secret references: what the main secret must hold. */
export function withoutProviderSecrets<C extends ProviderScopes>(config: C): C {
  const strip = (identity: { providers: Providers } | undefined) =>
    identity && {
      ...identity,
      providers: Object.fromEntries(
        Object.entries(identity.providers).map(([name, { clientSecret: _c, token: _t, ...rest }]) => [
          name,
          rest,
        ]),
      ),
    };
  return {
    ...config,
    ...(config.identity ? { identity: strip(config.identity) } : {}),
    ...(config.tenants
      ? { tenants: config.tenants.map((t) => ({ ...t, identity: strip(t.identity) })) }
      : {}),
  };
}

/**
 * What `config validate --secrets` says of each provider's name with IDENTITY_SECRET_ID set: an
 * error when neither secret holds it; a warning when the main secret still does (the workers read
 * it from there until it moves, and the API's function can read it as long as it is there).
 */
export function identitySecretProblems(
  config: ProviderScopes,
  main: SecretObject,
  identity: SecretObject,
): { errors: string[]; warnings: string[] } {
  const errors: string[] = [];
  const warnings: string[] = [];
  // A name a destination uses too must stay in the main secret as well.
  const shared = new Set(secretPlaces(config).main);
  for (const { path, name } of providerSecretRefs(config)) {
    const here = usable(identity[name]);
    if (!here && !usable(main[name]))
      errors.push(
        `${path}: secret "${name}" is not a non-empty string in the identity secret (IDENTITY_SECRET_ID), nor in the main one (SECRET_ID)`,
      );
    else if (!here)
      warnings.push(
        `${path}: secret "${name}" is not in the identity secret (IDENTITY_SECRET_ID) yet: the workers read it from the main secret (SECRET_ID), which the API's function can read too. Move it: ${TWO_SECRETS_DOC}`,
      );
    else if (usable(main[name]) && !shared.has(name))
      warnings.push(
        `${path}: secret "${name}" is in the identity secret and still in the main one (SECRET_ID), which the API's function can read: remove it from there (${TWO_SECRETS_DOC})`,
      );
  }
  return { errors, warnings };
}
