/**
 * Every CLI command, in the order `help` lists them. Every run of the CLI loads this list, so a
 * command's module holds its face at top level (words, usage, options, help: what `help` and the
 * parser need) and imports what its run needs inside the run: `--help` or `config validate` loads
 * none of `start`'s code, no SDK and no schema it does not use (build.mjs puts each in a chunk;
 * test/cli/bin.test.ts holds what is loaded at start to a budget).
 */
import type { Command } from '../command.ts';
import { assetsToggleCommand, serveCommand } from './api.ts';
import { configReferenceCommand, configSchemaCommand, configValidateCommand } from './config.ts';
import { destinationsTestCommand } from './destinations.ts';
import { emulatorCommand } from './emulator.ts';
import {
  eventsIgnoreCommand,
  eventsRemediateCommand,
  eventsUnignoreCommand,
  eventsUnremediateCommand,
} from './events.ts';
import {
  identityConfirmCompromisedCommand,
  identityDisableCommand,
  identityEnableCommand,
  identityRequirePasswordChangeCommand,
  identityRevokeSessionsCommand,
} from './identity-act.ts';
import { identityTestCommand } from './identity-test.ts';
import { lookupAccountCommand, lookupDomainCommand, lookupKeywordCommand } from './lookup.ts';
import {
  deliverCommand,
  deliveriesListCommand,
  deliveriesRetryCommand,
  pollCredentialsCommand,
  pollEventsCommand,
} from './poll.ts';
import { previewCommand } from './preview.ts';
import { silencesAddCommand, silencesExpireCommand, silencesListCommand } from './silences.ts';
import { startCommand } from './start.ts';
import { statusCommand } from './status.ts';
import { tokenTestCommand } from './token.ts';

export const commands: Command[] = [
  startCommand,
  pollEventsCommand,
  pollCredentialsCommand,
  deliverCommand,
  deliveriesListCommand,
  deliveriesRetryCommand,
  silencesAddCommand,
  silencesListCommand,
  silencesExpireCommand,
  statusCommand,
  serveCommand,
  assetsToggleCommand,
  eventsIgnoreCommand,
  eventsRemediateCommand,
  eventsUnignoreCommand,
  eventsUnremediateCommand,
  lookupAccountCommand,
  lookupDomainCommand,
  lookupKeywordCommand,
  tokenTestCommand,
  identityRevokeSessionsCommand,
  identityRequirePasswordChangeCommand,
  identityConfirmCompromisedCommand,
  identityDisableCommand,
  identityEnableCommand,
  identityTestCommand,
  configValidateCommand,
  configSchemaCommand,
  configReferenceCommand,
  destinationsTestCommand,
  previewCommand,
  emulatorCommand,
];
