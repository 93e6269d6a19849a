/**
 * The one list of destination kinds. Everything that handles a destination reads it: the config
 * schema, `config validate`, `preview`, `destinations test`, notices, follow-ups, pace, the docs.
 * A new kind is a folder beside this file, its import and one line in `KINDS`
 * (docs/development.md, "Adding a destination").
 */
import * as z from 'zod/mini';
import { consoleKind } from './console/index.ts';
import { discordKind } from './discord/index.ts';
import { emailKind } from './email/index.ts';
import { googlechatKind } from './googlechat/index.ts';
import { jiraKind } from './jira/index.ts';
import type { KindBody, KindFace, RenderRun, Resolve } from './kind.ts';
import { mattermostKind } from './mattermost/index.ts';
import { pagerdutyKind } from './pagerduty/index.ts';
import { sentinelKind } from './sentinel/index.ts';
import { servicenowKind } from './servicenow/index.ts';
import { slackKind } from './slack/index.ts';
import { splunkKind } from './splunk/index.ts';
import { teamsKind } from './teams/index.ts';
import { webhookKind } from './webhook/index.ts';

/** Every kind, by its name in the config's `type`. */
export const KINDS = {
  slack: slackKind,
  email: emailKind,
  googlechat: googlechatKind,
  webhook: webhookKind,
  teams: teamsKind,
  discord: discordKind,
  mattermost: mattermostKind,
  pagerduty: pagerdutyKind,
  jira: jiraKind,
  servicenow: servicenowKind,
  splunk: splunkKind,
  sentinel: sentinelKind,
  console: consoleKind,
};

type Kinds = typeof KINDS;
export type DestinationType = keyof Kinds;
/** A destination as configured: one of the kinds' config shapes, by `type`. */
export type DestinationConfig = {
  [T in DestinationType]: Parameters<Kinds[T]['resolve']>[1];
}[DestinationType];

/**
 * The config's shape of a destination: each kind's own (a strict object whose `type` is the
 * kind's name), told apart by `type`.
 */
export const destinationSchema = z.discriminatedUnion(
  'type',
  // Each face's schema is such an object; its declared type is the wider one the face needs.
  Object.values(KINDS).map((kind) => kind.schema) as unknown as Parameters<typeof z.discriminatedUnion>[1],
) as unknown as z.ZodMiniType<DestinationConfig, unknown>;
/**
 * A destination with its secrets resolved, as its kind's face makes it; `sharing` counts the
 * destinations of the config that share its limit (its pace's `sharedBy`), set with the others.
 */
export type ResolvedDestination = {
  [T in DestinationType]: ReturnType<Kinds[T]['resolve']>;
}[DestinationType] & {
  sharing?: number;
};

export const DESTINATION_TYPES = Object.keys(KINDS) as DestinationType[];

/** Any kind's face, as the shared code uses it: on any destination of its kind. */
export type AnyKind = KindFace<DestinationConfig, ResolvedDestination>;

/** The face of the kind named `type`. */
export function kindOf(type: DestinationType): AnyKind {
  // Each face takes only its own kind's destinations; the shared code gives it only those.
  return KINDS[type] as unknown as AnyKind;
}

/** Whether `type` names a kind. */
export function isDestinationType(type: string): type is DestinationType {
  return Object.hasOwn(KINDS, type);
}

/** The destination as configured, its secrets looked up by `get`. */
export function resolveWith(name: string, config: DestinationConfig, get: Resolve): ResolvedDestination {
  return kindOf(config.type).resolve(name, config, get);
}

/**
 * A destination as configured, resolved without the secret object, for what only renders and
 * never sends (`preview`, `config validate`): a secret stands as `<secret NAME>`.
 */
export function previewDestination(name: string, config: DestinationConfig): ResolvedDestination {
  return resolveWith(name, config, (value) =>
    typeof value === 'string' ? value : `<secret ${value.secret}>`,
  );
}

/** The body of a destination's kind (loaded when first needed). */
export function bodyOf(destination: { type: DestinationType }): Promise<KindBody<ResolvedDestination>> {
  return kindOf(destination.type).load();
}

/**
 * What a destination's kind reads when it renders beyond the shared options (its face's
 * `renderOptions`), from the run: `RenderOptions.kindOptions`.
 */
export function kindOptions(destination: { type: DestinationType }, run: RenderRun): unknown {
  return kindOf(destination.type).renderOptions?.(run);
}
