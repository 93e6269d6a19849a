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
 *
 * A credential may carry what an identity provider answered for its login (`identityAnswer`,
 * preview-identity.ts): its verdict is decided as a run decides it, set as the item's `_identity`
 * before routing, and shown with the routes it matches.
 */

import { readFile } from 'node:fs/promises';
import { readEnvironment } from '../../env.ts';
import { UsageError } from '../../errors.ts';
import type { Alert, DeliveryAlert } from '../../model.ts';
import { identityLine } from '../../render/identity.ts';
import type { AlertsConfig, DestinationConfig } from '../../rules/config.ts';
import { decide, domainWithin } from '../../rules/match.ts';
import { applyPasswordPolicy } from '../../rules/passwords.ts';
import { parseWellFormed } from '../../text.ts';
import { describeIssues } from '../../upstream/validate.ts';
import type { Command } from '../command.ts';
import { terminalSafe, useColor } from '../terminal.ts';
import type { takeIdentityAnswer } from './preview-identity.ts';

type Kind = 'event' | 'credential';

/** What `preview --help` says of an identity answer's shape (checked in preview-identity.ts). */
export const IDENTITY_ANSWER_HELP = [
  'A credential may carry, beside its fields, what an identity provider answered for its login, as',
  '"identityAnswer": preview decides its verdict as a run would (the leak dated from the item), sets it',
  'as the item\'s _identity, shows it, and routes on it (routes and silences matching "identity"):',
  '  "identityAnswer": {"provider": "corp", "account": {"id": "u-1", "displayName": "Kim Lee", "enabled": true,',
  '                     "passwordChangedAt": "2026-03-01T00:00:00Z", "unmanaged": false}}',
  '  "identityAnswer": {"provider": "corp", "found": false}',
  '  "identityAnswer": {"provider": "corp", "unavailable": "no answer within 3 s"}',
  '"provider" is a provider of the config (left out: the first whose domains cover the login);',
  '"passwordChangedAt" is null when the password was never changed; "unmanaged": true when another',
  'directory holds the password (synced from on-premises, delegated); "id" defaults to the login.',
];

type IdentityAnswer = NonNullable<ReturnType<typeof takeIdentityAnswer>['answer']>;

/** An event has `metadata.uid`; a credential has `id` and `identity_name`. */
export function itemKind(value: unknown): Kind | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const v = value as { metadata?: { uid?: unknown }; id?: unknown; identity_name?: unknown };
  if (v.metadata && typeof v.metadata === 'object' && 'uid' in v.metadata) return 'event';
  if ('id' in v && 'identity_name' in v) return 'credential';
  return undefined;
}

async function renderForPreview(
  name: string,
  configured: DestinationConfig,
  alerts: DeliveryAlert[],
  config: AlertsConfig,
  appUrl: string,
  color: boolean,
  now: Date,
): Promise<string> {
  const [{ bodyOf, kindOptions, previewDestination }, { identityLabelFor }] = await Promise.all([
    import('../../destinations/kinds.ts'),
    import('./preview-identity.ts'),
  ]);
  const destination = previewDestination(name, configured);
  const body = await bodyOf(destination);
  const messages = body.render(destination, alerts, {
    destination: name,
    appUrl,
    digest: config.digest,
    now,
    // What the kind reads of the run, as a run gives it (Slack's buttons with `actions.slack`).
    kindOptions: kindOptions(destination, { actions: config.actions, color }),
    identityLabel: identityLabelFor(config),
  });
  const several = messages.length > 1;
  // Payloads carry the item's text as the destination gets it; on the terminal its controls are
  // shown as escapes (a kind that prints for the terminal itself strips them, with colours its own).
  const shown = (payload: unknown, ids: readonly string[]) => {
    const text = body.show ? body.show(configured, payload, ids, name) : JSON.stringify(payload, null, 2);
    return body.terminal ? text : terminalSafe(text, { multiline: true });
  };
  return messages
    .map((m, i) => {
      const head = several ? `--- message ${i + 1} of ${messages.length}: ${m.summary} ---\n` : '';
      // A digest to a Slack app: the parent, then each reply in its thread.
      const replies = (m.thread ?? []).map(
        (reply, r, all) => `--- reply ${r + 1} of ${all.length} in its thread ---\n${shown(reply, [])}`,
      );
      return [head + shown(m.payload, m.deliveryIds), ...replies].join('\n');
    })
    .join('\n\n');
}

export const previewCommand: Command = {
  path: ['preview'],
  example: 'exposure-alerts preview test/fixtures/event.json',
  optionHelp: {
    source:
      'the stream it came from, for routes that match sources: tenant, group:<id> or credentials:<domain>',
    destination:
      'only what this destination would receive (the command a dry run names for each of its messages)',
  },
  usage: 'preview <item.json> [--source tenant|group:<id>|credentials:<domain>] [--destination NAME]',
  summary:
    'print what each destination would receive for one event or credential (or, for a JSON array of them, for all of them due at once: digests and Slack threads included)',
  details: IDENTITY_ANSWER_HELP,
  options: { source: { type: 'string' }, destination: { type: 'string' } },
  positionals: [1, 1],
  async run({ positionals, values, io, warn }) {
    // The schemas, the config's and the renderers: loaded by this command, not by `--help` or another.
    const [
      { kindOf },
      { loadAlertsConfig },
      { credentialSchema, eventItemSchema },
      { identityLabelFor, previewVerdict, takeIdentityAnswer },
    ] = await Promise.all([
      import('../../destinations/kinds.ts'),
      import('../../rules/source.ts'),
      import('../../upstream/schemas.ts'),
      import('./preview-identity.ts'),
    ]);
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
    const items: { kind: Kind; item: unknown; where: string; answer?: IdentityAnswer }[] = [];
    for (const [index, value] of entries.entries()) {
      const where = many ? `${file} [${index}]` : file;
      const kind = itemKind(value);
      if (!kind) {
        throw new UsageError(
          `${where} is neither an event (it has no metadata.uid) nor a credential (it has no id and identity_name)`,
        );
      }
      // What a provider answered rides beside a credential's fields, not among them.
      const { item: upstream, answer } = takeIdentityAnswer(value as Record<string, unknown>, where);
      if (answer && kind === 'event')
        throw new UsageError(`${where}: identityAnswer: only a credential's login has an identity verdict`);
      const parsed = (kind === 'event' ? eventItemSchema : credentialSchema).safeParse(upstream);
      if (!parsed.success) {
        io.stderr(`exposure-alerts: ${where} is not a valid ${kind}:\n`);
        for (const issue of describeIssues(parsed.error.issues, upstream))
          io.stderr(`  ${terminalSafe(`${issue.path || '(item)'}: ${issue.message}`)}\n`);
        return 2;
      }
      items.push({ kind, item: parsed.data, where, ...(answer ? { answer } : {}) });
    }
    const env = readEnvironment(io.env);
    const { config, source: configSource } = await loadAlertsConfig(env, warn);
    const now = new Date();
    const source = typeof values.source === 'string' ? values.source : undefined;
    if (source !== undefined && !/^(tenant|group:\d+|credentials:.+)$/.test(source)) {
      throw new UsageError('--source must be tenant, group:<id> or credentials:<domain>');
    }
    const only = typeof values.destination === 'string' ? values.destination : undefined;
    if (only !== undefined && !Object.hasOwn(config.destinations, only))
      throw new UsageError(
        `--destination: the config has no destination "${only}" (it has ${Object.keys(config.destinations).join(', ')})`,
      );
    const alerts = items.map(({ kind, item, answer, where }) => {
      const alert = alertOf(kind, item, config, source);
      if (!answer || alert.kind !== 'credential') return alert;
      // Set before routing, as a run sets it: routes and silences on `identity` see it.
      const verdict = previewVerdict(alert.item, answer, config, where, warn);
      return { ...alert, item: { ...alert.item, _identity: verdict } } as Alert;
    });
    const color = useColor(io);
    const out: string[] = [];
    const label = identityLabelFor(config);
    // Each previewed verdict, and the routes the item matches with it (the provider's words escaped).
    const verdicts = alerts.flatMap((alert) => {
      const line = identityLine(alert, { identityLabel: label });
      if (!line) return [];
      const routes = [...new Set([...decide(config, alert, now).destinations.values()].flat())];
      return [
        terminalSafe(
          `identity${many ? ` of ${alert.key}` : ''}: ${line}; routes matched: ${routes.length ? routes.join(', ') : 'none'}`,
        ),
      ];
    });
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
    out.push(...verdicts);
    // Each destination's share, as a delivery pass with exactly these items due would send it.
    const shares = new Map<string, { alerts: DeliveryAlert[]; silenced: number; routes: Set<string> }>();
    let silencedOnly: ReturnType<typeof decide>['silenced'];
    for (const alert of alerts) {
      const decision = decide(config, alert, now);
      if (decision.silenced) silencedOnly = decision.silenced;
      for (const [name, routes] of decision.destinations) {
        if (only !== undefined && name !== only) continue;
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
      out.push(
        `no route matches ${many ? 'these items' : 'this item'}${only ? ` for ${only}` : ''}: it would not be sent ${only ? 'there' : 'anywhere'}`,
      );
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
      out.push(kindOf(destination.type).describe(destination));
      if (share.alerts.length)
        out.push(await renderForPreview(name, destination, share.alerts, config, env.appUrl, color, now));
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
