/**
 * `preview <event-or-credential.json> [--source S]`: what each destination would receive for one
 * upstream item, without sending anything or needing a secret. The item is validated with the
 * upstream schemas, the password policy applied, the routes and silences decided, and each chosen
 * destination's payload printed exactly (the webhook with the headers it would carry; values that
 * are secrets, or computed with one at send time, are described instead of shown).
 *
 * A JSON array of items is previewed as a delivery pass with exactly those items due would send
 * them: each destination's share rendered together, so a digest shows as one, and a digest to a
 * Slack app as its thread plan (the parent, then every reply in order).
 */

import { readFile } from 'node:fs/promises';
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
import { describeDestination, secretText } from './preview-describe.ts';

type Kind = 'event' | 'credential';

/** An event has `metadata.uid`; a credential has `id` and `identity_name`. */
export function itemKind(value: unknown): Kind | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const v = value as { metadata?: { uid?: unknown }; id?: unknown; identity_name?: unknown };
  if (v.metadata && typeof v.metadata === 'object' && 'uid' in v.metadata) return 'event';
  if ('id' in v && 'identity_name' in v) return 'credential';
  return undefined;
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

/** The routing key is a secret even when written in the config: named, never shown. */
function routingKeyText(value: string | SecretRef): string {
  return typeof value === 'string' ? '<routing key, not shown>' : secretText(value);
}

function renderForPreview(
  name: string,
  destination: DestinationConfig,
  alerts: DeliveryAlert[],
  config: AlertsConfig,
  appUrl: string,
  color: boolean,
  now: Date,
): string {
  const messages = renderFor(
    destination,
    alerts,
    { destination: name, appUrl, digest: config.digest, now },
    { color },
  );
  const several = messages.length > 1;
  return messages
    .map((m, i) => {
      const head = several ? `--- message ${i + 1} of ${messages.length}: ${m.summary} ---\n` : '';
      // A digest to a Slack app: the parent, then each reply in its thread.
      const replies = (m.thread ?? []).map(
        (reply, r, all) =>
          `--- reply ${r + 1} of ${all.length} in its thread ---\n${terminalSafe(JSON.stringify(reply, null, 2), { multiline: true })}`,
      );
      return [head + payloadText(name, destination, m), ...replies].join('\n');
    })
    .join('\n\n');
}

function payloadText(
  name: string,
  destination: DestinationConfig,
  m: { payload: unknown; deliveryIds: string[] },
): string {
  switch (destination.type) {
    // Payloads carry the item's text as the destination gets it; on the terminal its controls
    // are shown as escapes. The console rendering is left as it is: it strips them itself,
    // and its ANSI colours are its own.
    case 'slack':
    case 'teams':
    case 'discord':
    case 'jira':
    case 'servicenow':
    case 'splunk':
    case 'sentinel':
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
      return terminalSafe(`Subject: ${mail.subject}\n--- text ---\n${mail.text}--- html ---\n${mail.html}`, {
        multiline: true,
      });
    }
    case 'webhook':
      return terminalSafe(
        `${webhookHeaders(name, destination, m.deliveryIds)}\n\n${JSON.stringify(m.payload as WebhookBody, null, 2)}`,
        { multiline: true },
      );
    default:
      return String(m.payload).replace(/\n$/, '');
  }
}

export const previewCommand: Command = {
  path: ['preview'],
  example: 'exposure-alerts preview test/fixtures/event.json',
  optionHelp: {
    source:
      'the stream it came from, for routes that match sources: tenant, group:<id> or credentials:<domain>',
  },
  usage: 'preview <item.json> [--source tenant|group:<id>|credentials:<domain>]',
  summary:
    'print what each destination would receive for one event or credential (or, for a JSON array of them, for all of them due at once: digests and Slack threads included)',
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
    const many = Array.isArray(raw);
    const entries = many ? (raw as unknown[]) : [raw];
    if (entries.length === 0) throw new UsageError(`${file} holds an empty array: nothing to preview`);
    const items: { kind: Kind; item: unknown }[] = [];
    for (const [index, value] of entries.entries()) {
      const where = many ? `${file} [${index}]` : file;
      const kind = itemKind(value);
      if (!kind) {
        throw new UsageError(
          `${where} is neither an event (it has no metadata.uid) nor a credential (it has no id and identity_name)`,
        );
      }
      const parsed = (kind === 'event' ? eventItemSchema : credentialSchema).safeParse(value);
      if (!parsed.success) {
        io.stderr(`exposure-alerts: ${where} is not a valid ${kind}:\n`);
        for (const issue of describeIssues(parsed.error.issues, value))
          io.stderr(`  ${terminalSafe(`${issue.path || '(item)'}: ${issue.message}`)}\n`);
        return 2;
      }
      items.push({ kind, item: parsed.data });
    }
    const env = readEnvironment(io.env);
    const { config, source: configSource } = await loadAlertsConfig(env, warn);
    const now = new Date();
    const source = typeof values.source === 'string' ? values.source : undefined;
    if (source !== undefined && !/^(tenant|group:\d+|credentials:.+)$/.test(source)) {
      throw new UsageError('--source must be tenant, group:<id> or credentials:<domain>');
    }
    const alerts = items.map(({ kind, item }) => alertOf(kind, item, config, source));
    const color = useColor(io);
    const out: string[] = [];
    if (!many) {
      const [alert] = alerts as [Alert];
      out.push(
        terminalSafe(`${alert.kind} ${alert.key} from source ${alert.source}; config: ${configSource}`),
      );
    } else {
      const events = alerts.filter((a) => a.kind === 'event').length;
      out.push(
        terminalSafe(
          `${alerts.length} items (${events} events, ${alerts.length - events} credentials), due together; config: ${configSource}`,
        ),
      );
    }
    // Each destination's share, as a delivery pass with exactly these items due would send it.
    const shares = new Map<string, { alerts: DeliveryAlert[]; silenced: number; routes: Set<string> }>();
    let silencedOnly: ReturnType<typeof decide>['silenced'];
    for (const alert of alerts) {
      const decision = decide(config, alert, now);
      if (decision.silenced) silencedOnly = decision.silenced;
      for (const [name, routes] of decision.destinations) {
        const share = shares.get(name) ?? { alerts: [], silenced: 0, routes: new Set<string>() };
        for (const r of routes) share.routes.add(r);
        if (decision.silenced && many) share.silenced += 1;
        else
          share.alerts.push({
            ...alert,
            deliveryId: `${name}~${alert.kind}~${alert.key}`,
            destination: name,
            routes,
          } as DeliveryAlert);
        shares.set(name, share);
      }
    }
    if (shares.size === 0) {
      out.push(`no route matches ${many ? 'these items' : 'this item'}: it would not be sent anywhere`);
      io.stdout(`${out.join('\n')}\n`);
      return 0;
    }
    if (!many && silencedOnly) {
      const s = silencedOnly;
      out.push(
        terminalSafe(
          `SILENCED${s.name ? ` by "${s.name}"` : ''} until ${s.until} (${s.reason}): it would be recorded, not sent. What each destination would have received:`,
        ),
      );
    }
    for (const [name, share] of shares) {
      const destination = config.destinations[name];
      const counts = many
        ? ` · ${share.alerts.length} items${share.silenced ? `, ${share.silenced} silenced (recorded, not sent)` : ''}`
        : '';
      out.push(
        '',
        `=== ${name} (${destination?.type ?? 'unknown'})${counts} · routes: ${[...share.routes].join(', ')}${!many && silencedOnly ? ' · silenced, not sent' : ''} ===`,
      );
      if (!destination) {
        out.push(`no destination named "${name}" in the config`);
        continue;
      }
      out.push(describeDestination(destination));
      if (share.alerts.length)
        out.push(renderForPreview(name, destination, share.alerts, config, env.appUrl, color, now));
    }
    io.stdout(`${out.join('\n')}\n`);
    return 0;
  },
};

/** The alert an upstream item makes: the password policy applied, its source as polling names it. */
function alertOf(kind: Kind, data: unknown, config: AlertsConfig, source: string | undefined): Alert {
  if (kind === 'event') {
    const item = data as Alert['item'] & { metadata: { uid: string } };
    return { kind: 'event', key: item.metadata.uid, source: source ?? 'tenant', item } as Alert;
  }
  const item = applyPasswordPolicy(data as Extract<Alert, { kind: 'credential' }>['item'], config.passwords);
  const domain = config.sources.credentials?.domains.find((d) => domainWithin(item.domain, d)) ?? item.domain;
  return {
    kind: 'credential',
    key: String(item.id),
    source: source ?? `credentials:${domain.toLowerCase()}`,
    item,
  };
}
