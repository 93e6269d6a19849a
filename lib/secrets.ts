/**
 * The secret object (docs/configuration.md): named secrets (`apiToken`, `apiKey`, `apiClients`, and any
 * name the config refers to), from Secrets Manager (`SECRET_ID`) or a local JSON file
 * (`SECRETS_FILE`). Every string value read is registered with the log redactor at once.
 */

import { readFile } from 'node:fs/promises';
import { ConfigError } from './errors.ts';
import { redactor as globalRedactor, type Redactor } from './log.ts';
import { parseJson } from './rules/json.ts';
import { requireSdk } from './state/aws-require.ts';

export type SecretObject = Record<string, unknown>;

export interface SecretSource {
  secretId?: string;
  secretsFile?: string;
}

function registerAll(value: unknown, red: Redactor): void {
  if (typeof value === 'string') red.add(value);
  else if (Array.isArray(value)) for (const v of value) registerAll(v, red);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) registerAll(v, red);
}

function parseSecretObject(text: string, where: string): SecretObject {
  let parsed: unknown;
  try {
    parsed = parseJson(text);
  } catch (error) {
    // The position only: the text is secrets (JSON names the character it stopped at: not that).
    const why = (error as Error).message.replace(/Unexpected token '[^']*'/, 'Unexpected character');
    throw new ConfigError(`${where} is not valid JSON: ${why}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError(`${where} must hold a JSON object of named secrets`);
  }
  return parsed as SecretObject;
}

/** Fetches a secret string from Secrets Manager; the SDK is loaded only when used. */
export async function fetchSecretString(secretId: string): Promise<string> {
  const { SecretsManagerClient, GetSecretValueCommand } = requireSdk(
    '@aws-sdk/client-secrets-manager',
  ) as typeof import('@aws-sdk/client-secrets-manager');
  const client = new SecretsManagerClient({});
  const out = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
  if (typeof out.SecretString !== 'string') throw new ConfigError(`secret ${secretId} has no string value`);
  return out.SecretString;
}

export async function loadSecrets(
  source: SecretSource,
  options: { redactor?: Redactor; fetchSecret?: (id: string) => Promise<string> } = {},
): Promise<SecretObject> {
  const red = options.redactor ?? globalRedactor;
  let secrets: SecretObject = {};
  if (source.secretId) {
    const text = await (options.fetchSecret ?? fetchSecretString)(source.secretId);
    secrets = parseSecretObject(text, `secret ${source.secretId}`);
  } else if (source.secretsFile) {
    let text: string;
    try {
      text = await readFile(source.secretsFile, 'utf8');
    } catch (error) {
      throw new ConfigError(
        `SECRETS_FILE ${source.secretsFile} cannot be read (${(error as NodeJS.ErrnoException).code})`,
      );
    }
    secrets = parseSecretObject(text, `SECRETS_FILE ${source.secretsFile}`);
  }
  registerAll(secrets, red);
  return secrets;
}
