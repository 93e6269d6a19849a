/**
 * `preview <event-or-credential.json> [--source S]`: what each destination would receive for one
 * upstream item, without sending anything or needing a secret. The item is validated with the
 * upstream schemas, the password policy applied, the routes and silences decided, and each chosen
 * destination's payload printed exactly (the webhook with the headers it would carry; values that
 * are secrets, or computed with one at send time, are described instead of shown).
 */

import { readFile } from 'node:fs/promises';
import { PAGERDUTY_URL } from '../../deliver/destinations.ts';
import { readEnvironment } from '../../env.ts';
import { UsageError } from '../../errors.ts';
import type { Alert, DeliveryAlert } from '../../model.ts';
import { renderFor } from '../../render/index.ts';
import type { EmailContent, PagerDutyEvent, WebhookBody } from '../../render/types.ts';
import { webhookIdempotencyKey } from '../../render/webhook.ts';
import type { AlertsConfig, DestinationConfig, SecretRef } from '../../rules/config.ts';
import { decide, domainWithin } from '../../rules/match.ts';
import { applyPasswordPolicy } from '../../rules/passwords.ts';
import { loadAlertsConfig } from '../../rules/source.ts';
import { parseWellFormed } from '../../text.ts';
import { credentialSchema, eventItemSchema } from '../../upstream/schemas.ts';
import { describeIssues } from '../../upstream/validate.ts';
import type { Command } from '../command.ts';
import { terminalSafe, useColor } from '../terminal.ts';

type Kind = 'event' | 'credential';

/** An event has `metadata.uid`; a credential has `id` and `identity_name`. */
export function itemKind(value: unknown): Kind | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const v = value as { metadata?: { uid?: unknown }; id?: unknown; identity_name?: unknown };
  if (v.metadata && typeof v.metadata === 'object' && 'uid' in v.metadata) return 'event';
  if ('id' in v && 'identity_name' in v) return 'credential';
  return undefined;
}

function secretText(value: string | SecretRef): string {
  return typeof value === 'string' ? value : `<secret ${value.secret}>`;
}

/** A URL without its query (a token often hides there); secrets by name only. */
function urlText(value: string | SecretRef): string {
  if (typeof value !== 'string') return secretText(value);
  try {
    const url = new URL(value);
    return `${url.origin}${url.pathname}${url.search ? '?…' : ''}`;
  } catch {
    return '<invalid URL>';
  }
}

const SENSITIVE_HEADER = /auth|token|key|secret|signature|password|cookie/i;

function webhookHeaders(
  name: string,
  destination: Extract<DestinationConfig, { type: 'webhook' }>,
  ids: string[],
) {
  const headers: [string, string][] = [];
  for (const [header, value] of Object.entries(destination.headers ?? {})) {
    headers.push([
      header,
      typeof value !== 'string' ? secretText(value) : SENSITIVE_HEADER.test(header) ? '<hidden>' : value,
    ]);
  }
  headers.push(['Content-Type', 'application/json'], ['Idempotency-Key', webhookIdempotencyKey(name, ids)]);
  if (destination.signingSecret) {
    headers.push(
      ['X-Signature-Timestamp', '<unix seconds at send time>'],
      [
        'X-Signature-256',
        `sha256=<HMAC-SHA256 of "<timestamp>.<body>" with ${secretText(destination.signingSecret)}, computed at send time>`,
      ],
    );
  }
  return headers.map(([k, v]) => `${k}: ${v}`).join('\n');
}

function describeDestination(destination: DestinationConfig): string {
  switch (destination.type) {
    case 'slack':
      return 'POST to the Slack incoming webhook (its URL is a credential, not shown)';
    case 'email':
      return `e-mail via ${destination.provider}${destination.url ? ` (${urlText(destination.url)})` : ''} from ${destination.from} to ${destination.to.join(', ')}`;
    case 'webhook':
      return `POST ${urlText(destination.url)}`;
    case 'teams':
      return 'POST to the Teams Workflows webhook (its URL is a credential, not shown)';
    case 'pagerduty':
      return `PagerDuty Events API v2: POST ${urlText(destination.url ?? PAGERDUTY_URL)}`;
    case 'console':
      return 'printed on the terminal';
  }
}

/** The routing key is a secret even when written in the config: named, never shown. */
function routingKeyText(value: string | SecretRef): string {
  return typeof value === 'string' ? '<routing key, not shown>' : secretText(value);
}

function renderForPreview(
  name: string,
  destination: DestinationConfig,
  alert: DeliveryAlert,
  config: AlertsConfig,
  appUrl: string,
  color: boolean,
  now: Date,
): string {
  const messages = renderFor(
    destination,
    [alert],
    { destination: name, appUrl, digest: config.digest, now },
    { color },
  );
  return messages
    .map((m) => {
      switch (destination.type) {
        // Payloads carry the item's text as the destination gets it; on the terminal its controls
        // are shown as escapes. The console rendering is left as it is: it strips them itself,
        // and its ANSI colours are its own.
        case 'slack':
        case 'teams':
          return terminalSafe(JSON.stringify(m.payload, null, 2), { multiline: true });
        case 'pagerduty':
          return terminalSafe(
            JSON.stringify(
              { routing_key: routingKeyText(destination.routingKey), ...(m.payload as PagerDutyEvent) },
              null,
              2,
            ),
            { multiline: true },
          );
        case 'email': {
          const mail = m.payload as EmailContent;
          return terminalSafe(
            `Subject: ${mail.subject}\n--- text ---\n${mail.text}--- html ---\n${mail.html}`,
            { multiline: true },
          );
        }
        case 'webhook':
          return terminalSafe(
            `${webhookHeaders(name, destination, m.deliveryIds)}\n\n${JSON.stringify(m.payload as WebhookBody, null, 2)}`,
            { multiline: true },
          );
        default:
          return String(m.payload).replace(/\n$/, '');
      }
    })
    .join('\n\n');
}

export const previewCommand: Command = {
  path: ['preview'],
  example: 'exposure-alerts preview test/fixtures/event.json',
  optionHelp: {
    source:
      'the stream it came from, for routes that match sources: tenant, group:<id> or credentials:<domain>',
  },
  usage: 'preview <event-or-credential.json> [--source tenant|group:<id>|credentials:<domain>]',
  summary: 'print what each destination would receive for one event or credential',
  options: { source: { type: 'string' } },
  positionals: [1, 1],
  async run({ positionals, values, io, warn }) {
    const file = positionals[0]!;
    let raw: unknown;
    try {
      raw = parseWellFormed(await readFile(file, 'utf8'));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new UsageError(
        code ? `cannot read ${file} (${code})` : `${file} is not valid JSON: ${(error as Error).message}`,
      );
    }
    const kind = itemKind(raw);
    if (!kind) {
      throw new UsageError(
        `${file} is neither an event (it has no metadata.uid) nor a credential (it has no id and identity_name)`,
      );
    }
    const schema = kind === 'event' ? eventItemSchema : credentialSchema;
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      const issues = describeIssues(parsed.error.issues, raw);
      io.stderr(`exposure-alerts: ${file} is not a valid ${kind}:\n`);
      for (const issue of issues)
        io.stderr(`  ${terminalSafe(`${issue.path || '(item)'}: ${issue.message}`)}\n`);
      return 2;
    }
    const env = readEnvironment(io.env);
    const { config, source: configSource } = await loadAlertsConfig(env, warn);
    const now = new Date();
    const source = typeof values.source === 'string' ? values.source : undefined;
    if (source !== undefined && !/^(tenant|group:\d+|credentials:.+)$/.test(source)) {
      throw new UsageError('--source must be tenant, group:<id> or credentials:<domain>');
    }

    let alert: Alert;
    if (kind === 'event') {
      const item = parsed.data as Alert['item'] & { metadata: { uid: string } };
      alert = { kind: 'event', key: item.metadata.uid, source: source ?? 'tenant', item } as Alert;
    } else {
      const item = applyPasswordPolicy(
        parsed.data as Extract<Alert, { kind: 'credential' }>['item'],
        config.passwords,
      );
      const domain =
        config.sources.credentials?.domains.find((d) => domainWithin(item.domain, d)) ?? item.domain;
      alert = {
        kind: 'credential',
        key: String(item.id),
        source: source ?? `credentials:${domain.toLowerCase()}`,
        item,
      };
    }

    const decision = decide(config, alert, now);
    const out: string[] = [
      terminalSafe(`${kind} ${alert.key} from source ${alert.source}; config: ${configSource}`),
    ];
    if (!decision.destinations.size) {
      out.push('no route matches this item: it would not be sent anywhere');
      io.stdout(`${out.join('\n')}\n`);
      return 0;
    }
    if (decision.silenced) {
      const s = decision.silenced;
      out.push(
        terminalSafe(
          `SILENCED${s.name ? ` by "${s.name}"` : ''} until ${s.until} (${s.reason}): it would be recorded, not sent. What each destination would have received:`,
        ),
      );
    }
    const color = useColor(io);
    for (const [name, routes] of decision.destinations) {
      const destination = config.destinations[name];
      out.push(
        '',
        `=== ${name} (${destination?.type ?? 'unknown'}) · routes: ${routes.join(', ')}${decision.silenced ? ' · silenced, not sent' : ''} ===`,
      );
      if (!destination) {
        out.push(`no destination named "${name}" in the config`);
        continue;
      }
      const delivery = {
        ...alert,
        deliveryId: `${name}~${alert.kind}~${alert.key}`,
        destination: name,
        routes,
      } as DeliveryAlert;
      out.push(
        describeDestination(destination),
        renderForPreview(name, destination, delivery, config, env.appUrl, color, now),
      );
    }
    io.stdout(`${out.join('\n')}\n`);
    return 0;
  },
};
