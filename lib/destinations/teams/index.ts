/**
 * Microsoft Teams through a Workflows webhook: one Adaptive Card a message, upstream text only in
 * TextRuns (which render no Markdown), at most one message a second per URL.
 */
import * as z from 'zod/mini';
import { httpUrl, secretOr } from '../../rules/schema-parts.ts';
import type { KindBody, KindFace } from '../kind.ts';
import type { TeamsDestination } from './types.ts';

/** A Teams Workflows webhook: its URL carries a signature (`sig=`), so it is a secret in practice. */
export const teamsSchema = z.strictObject({
  type: z.literal('teams'),
  url: secretOr(httpUrl),
});
export type TeamsConfig = z.infer<typeof teamsSchema>;

const OFFICE_CONNECTOR_URL = /^https?:\/\/[^/]*webhook\.office\.com(:\d+)?\//i;
const LOGIC_APPS_URL = /^https?:\/\/[^/]*logic\.azure\.com(:\d+)?\//i;

export const teamsKind: KindFace<TeamsConfig, TeamsDestination> = {
  type: 'teams',
  title: 'Microsoft Teams',
  schema: teamsSchema,
  resolve: (name, config, get) => ({ name, type: 'teams', url: get(config.url, 'url') }),
  pace: (d) => ({ everyMs: 1_000, sharedBy: `teams ${d.url}` }),
  describe: () => 'POST to the Teams Workflows webhook (its URL is a credential, not shown)',
  warnings: (config, path) =>
    typeof config.url !== 'string'
      ? []
      : [
          OFFICE_CONNECTOR_URL.test(config.url)
            ? `${path}.url: an Office 365 connector URL; connectors are retired: create a Workflows webhook for the channel and use its URL, kept in the secret object`
            : LOGIC_APPS_URL.test(config.url)
              ? `${path}.url: a Workflows URL of the old form (logic.azure.com), which Teams has retired: create the channel's Workflows webhook again and use its new URL (…powerplatform.com…), kept in the secret object`
              : `${path}.url: a Workflows URL carries its signature (sig=), so anyone who has it can post: keep it in the secret object ({ "secret": "NAME" })`,
        ],
  docs: async () => (await import('./docs.ts')).docs,
  load: async (): Promise<KindBody<TeamsDestination>> => (await import('./body.ts')).teamsBody,
};
