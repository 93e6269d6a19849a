/**
 * `config validate [file]` and `config schema`.
 *
 * validate: every schema and cross-reference error with its path, one per line (exit 2; past the
 * first 50, a count of the rest), then the
 * built-in samples rendered through every destination (no sending, no secrets), so a renderer
 * failure or a Slack-limit breach shows up here, named by destination, and not at run time. With
 * `--secrets` it also reads the secret object and names each secret the config refers to that is
 * not there (names only: a value is never printed); without it, no secret is needed. With identity
 * providers it says which names belong in the identity secret (IDENTITY_SECRET_ID, which only the
 * workers read) and which in the main one; with IDENTITY_SECRET_ID set it reads both, and warns of a
 * provider's name still in the main secret (lib/identity/secrets.ts).
 * schema: the JSON Schema of the config, for editors, every key described (rules/config-docs.ts).
 * reference: the same descriptions as the Markdown reference, docs/config.md.
 */

import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { readEnvironment } from '../../env.ts';
import { UsageError } from '../../errors.ts';
import type { secretPlaces } from '../../identity/secrets.ts';
import { projectFile } from '../../root.ts';
import { parseJson } from '../../rules/json.ts';
import type { Command } from '../command.ts';

/** The file to validate: the argument, else ALERTS_CONFIG, else ./alerts.config.json when present. */
async function configFileFor(argument: string | undefined, env: Record<string, string | undefined>) {
  const { DEFAULT_CONFIG_FILE } = await import('../../rules/source.ts');
  const fromEnv = env.ALERTS_CONFIG?.trim();
  const file = argument ?? (fromEnv || (existsSync(DEFAULT_CONFIG_FILE) ? DEFAULT_CONFIG_FILE : undefined));
  if (!file) {
    throw new UsageError(
      `no config to validate: pass a file (config validate path/to/alerts.config.json), set ALERTS_CONFIG, or create ./${DEFAULT_CONFIG_FILE}`,
    );
  }
  return file;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export const configValidateCommand: Command = {
  path: ['config', 'validate'],
  example: 'exposure-alerts config validate alerts.config.json',
  usage: 'config validate [file] [--secrets]',
  summary: 'validate an alert config (path-precise errors) and render samples through every destination',
  options: { secrets: { type: 'boolean' } },
  optionHelp: {
    secrets:
      "also check that every secret the config names (destinations, heartbeat, Slack, identity providers) is in the secret object of SECRETS_FILE or SECRET_ID (the providers' in IDENTITY_SECRET_ID when set), and say which name belongs in which secret; values are never printed",
  },
  positionals: [0, 1],
  async run({ positionals, values, io }) {
    // The checks and the renderers: loaded by this command, not by `--help` or another.
    const [
      { checkRendering },
      { checkConfig, listedProblems },
      { missingSecrets, urlSecretProblems },
      { checkIdentityWarnings },
    ] = await Promise.all([
      import('../../render/check.ts'),
      import('../../rules/config.ts'),
      import('../../rules/config-checks.ts'),
      import('../../rules/config-identity.ts'),
    ]);
    const file = await configFileFor(positionals[0], io.env);
    const secretSource = { secretId: io.env.SECRET_ID?.trim(), secretsFile: io.env.SECRETS_FILE?.trim() };
    const identitySecretId = io.env.IDENTITY_SECRET_ID?.trim() || undefined;
    if (values.secrets && !secretSource.secretId && !secretSource.secretsFile)
      throw new UsageError('--secrets reads the secret object: set SECRETS_FILE (or SECRET_ID on AWS)');
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      throw new UsageError(`cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    let json: unknown;
    try {
      json = parseJson(text);
    } catch (error) {
      io.stderr(`exposure-alerts: ${file} is not valid JSON: ${(error as Error).message}\n`);
      return 2;
    }
    const now = new Date();
    const check = checkConfig(json, now);
    const errors = [...check.errors];
    if (check.config) checkIdentityWarnings(check.config, check.warnings);
    if (check.config) {
      // Only EXPOSURE_APP_URL matters here; a bad unrelated variable must not fail validation.
      const appUrl = readEnvironment({ EXPOSURE_APP_URL: io.env.EXPOSURE_APP_URL }).appUrl;
      errors.push(...(await checkRendering(check.config, { appUrl, now })));
      if (values.secrets) {
        // Reading secrets takes the AWS SDK: only with --secrets.
        const [{ identitySecretProblems, withoutProviderSecrets }, { loadSecrets }, { apiClientProblems }] =
          await Promise.all([
            import('../../identity/secrets.ts'),
            import('../../secrets.ts'),
            import('../../api/auth.ts'),
          ]);
        const secrets = await loadSecrets(secretSource);
        // With the identity secret, the providers' names are looked for there (and warned of in the main one).
        const identity = identitySecretId ? await loadSecrets({ secretId: identitySecretId }) : undefined;
        const placed = identity && identitySecretProblems(check.config, secrets, identity);
        const mainConfig = placed ? withoutProviderSecrets(check.config) : check.config;
        errors.push(...missingSecrets(mainConfig, secrets), ...urlSecretProblems(check.config, secrets));
        // The API's clients: a binding must name tenants this config has (docs/api.md).
        errors.push(...apiClientProblems(secrets.apiClients, check.config.tenants ?? []));
        errors.push(...(placed?.errors ?? []));
        check.warnings.push(...(placed?.warnings ?? []));
      }
    }
    for (const warning of check.warnings) io.stderr(`warning: ${warning}\n`);
    const places =
      values.secrets && check.config ? await placesText(check.config, secretSource, identitySecretId) : '';
    if (errors.length) {
      io.stderr(`exposure-alerts: ${file} is invalid (${plural(errors.length, 'error')}):\n`);
      io.stderr(
        listedProblems(errors)
          .map((error) => `  ${error}\n`)
          .join(''),
      );
      io.stdout(places);
      return 2;
    }
    const config = check.config!;
    const providers = [config.identity, ...(config.tenants ?? []).map((t) => t.identity)].reduce(
      (n, identity) => n + Object.keys(identity?.providers ?? {}).length,
      0,
    );
    io.stdout(
      `config OK: ${plural(config.routes.length, 'route')}, ${plural(Object.keys(config.destinations).length, 'destination')}${providers ? `, ${plural(providers, 'identity provider')}` : ''}${values.secrets ? '; every secret it names is in the secret object' : ''}\n${places}`,
    );
    return 0;
  },
};

/**
 * Which of the config's names belong in which secret, when it has identity providers: on AWS the
 * API's function reads the main secret only, so the providers' credentials have their own.
 */
async function placesText(
  config: Parameters<typeof secretPlaces>[0],
  source: { secretId?: string },
  identitySecretId: string | undefined,
): Promise<string> {
  const { secretPlaces, TWO_SECRETS_DOC } = await import('../../identity/secrets.ts');
  const { main, identity } = secretPlaces(config);
  if (!identity.length) return '';
  const names = (list: string[]) => (list.length ? list.join(', ') : 'none of its names');
  const read = identitySecretId
    ? ''
    : source.secretId
      ? ' (set IDENTITY_SECRET_ID too, to check the identity secret)'
      : ' (here SECRETS_FILE holds both)';
  return `secrets on AWS${read}, see ${TWO_SECRETS_DOC}:\n  the main secret (SECRET_ID): ${names(main)}\n  the identity secret (IDENTITY_SECRET_ID, read by the workers only): ${names(identity)}\n`;
}

/** The example config of the deploy guide, shipped with the package. */
const EXAMPLE_CONFIG = projectFile('infra/alerts.config.example.json');

export const configReferenceCommand: Command = {
  path: ['config', 'reference'],
  example: 'exposure-alerts config reference > docs/config.md',
  usage: 'config reference',
  summary: 'print the config reference (every key: type, default, meaning, example) as Markdown',
  async run({ io }) {
    const [{ withKindDocs }, { configReference }] = await Promise.all([
      import('../../rules/config-docs.ts'),
      import('../../rules/config-reference.ts'),
    ]);
    const example = JSON.parse(await readFile(EXAMPLE_CONFIG, 'utf8')) as unknown;
    await withKindDocs();
    io.stdout(configReference(example));
    return 0;
  },
};

export const configSchemaCommand: Command = {
  path: ['config', 'schema'],
  example: 'exposure-alerts config schema > alerts.schema.json',
  usage: 'config schema',
  summary: 'print the JSON Schema of the alert config',
  async run({ io }) {
    const [{ withKindDocs }, { documentedJsonSchema }] = await Promise.all([
      import('../../rules/config-docs.ts'),
      import('../../rules/config-reference.ts'),
    ]);
    await withKindDocs();
    io.stdout(`${JSON.stringify(documentedJsonSchema(), null, 2)}\n`);
    return 0;
  },
};
