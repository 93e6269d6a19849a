/**
 * Destinations with their secrets resolved: every `{ "secret": "NAME" }` in the config looked up
 * in the secret object once, at start, so a missing secret fails there, naming the destination
 * and the secret, and never mid-delivery. Every resolved URL and key is registered with the log
 * redactor (a Slack webhook URL is itself a credential).
 */
import { ConfigError } from '../errors.ts';
import { redactor } from '../log.ts';
import type { AlertsConfig, DestinationConfig, SecretRef } from '../rules/config.ts';
import type { SecretObject } from '../secrets.ts';

export const PROVIDER_URLS = {
  sendgrid: 'https://api.sendgrid.com/v3/mail/send',
  postmark: 'https://api.postmarkapp.com/email',
} as const;

export type ResolvedDestination =
  | { name: string; type: 'slack'; url: string }
  | {
      name: string;
      type: 'email';
      provider: 'generic' | 'sendgrid' | 'postmark';
      url: string;
      apiKey?: string;
      from: string;
      to: string[];
      messageStream?: string;
    }
  | { name: string; type: 'webhook'; url: string; signingSecret?: string; headers: Record<string, string> }
  | { name: string; type: 'console' };

function resolveValue(
  value: string | SecretRef,
  secrets: SecretObject,
  path: string,
  problems: string[],
): string {
  if (typeof value === 'string') return value;
  const found = secrets[value.secret];
  if (typeof found !== 'string' || found === '') {
    problems.push(
      `${path}: secret "${value.secret}" is not a non-empty string in the secret object (SECRET_ID / SECRETS_FILE)`,
    );
    return '';
  }
  return found;
}

export function resolveDestination(
  name: string,
  config: DestinationConfig,
  secrets: SecretObject,
  problems: string[],
): ResolvedDestination {
  const path = `destinations.${name}`;
  const get = (value: string | SecretRef, key: string) => {
    const resolved = resolveValue(value, secrets, `${path}.${key}`, problems);
    redactor.add(resolved);
    return resolved;
  };
  switch (config.type) {
    case 'slack':
      return { name, type: 'slack', url: get(config.url, 'url') };
    case 'email': {
      const url =
        config.url !== undefined
          ? get(config.url, 'url')
          : config.provider === 'generic'
            ? ''
            : PROVIDER_URLS[config.provider];
      return {
        name,
        type: 'email',
        provider: config.provider,
        url,
        ...(config.apiKey !== undefined ? { apiKey: get(config.apiKey, 'apiKey') } : {}),
        from: config.from,
        to: config.to,
        ...(config.messageStream ? { messageStream: config.messageStream } : {}),
      };
    }
    case 'webhook':
      return {
        name,
        type: 'webhook',
        url: get(config.url, 'url'),
        ...(config.signingSecret !== undefined
          ? { signingSecret: get(config.signingSecret, 'signingSecret') }
          : {}),
        headers: Object.fromEntries(
          Object.entries(config.headers ?? {}).map(([header, value]) => [
            header,
            get(value, `headers.${header}`),
          ]),
        ),
      };
    case 'console':
      return { name, type: 'console' };
  }
}

/** Every destination of the config, resolved; a ConfigError lists each missing secret. */
export function resolveDestinations(
  config: AlertsConfig,
  secrets: SecretObject,
): Map<string, ResolvedDestination> {
  const problems: string[] = [];
  const out = new Map<string, ResolvedDestination>();
  for (const [name, destination] of Object.entries(config.destinations)) {
    out.set(name, resolveDestination(name, destination, secrets, problems));
  }
  if (problems.length)
    throw new ConfigError(
      `${problems.length === 1 ? 'a destination secret is' : `${problems.length} destination secrets are`} missing`,
      problems,
    );
  return out;
}
