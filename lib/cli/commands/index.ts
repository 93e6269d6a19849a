/** Every CLI command, in the order `help` lists them. */
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
