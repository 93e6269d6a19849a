/** Every CLI command, in the order `help` lists them. */
import type { Command } from '../command.ts';
import { assetsToggleCommand, serveCommand } from './api.ts';
import { configSchemaCommand, configValidateCommand } from './config.ts';
import { destinationsTestCommand } from './destinations.ts';
import { emulatorCommand } from './emulator.ts';
import {
  deliverCommand,
  deliveriesListCommand,
  deliveriesRetryCommand,
  pollCredentialsCommand,
  pollEventsCommand,
} from './poll.ts';
import { previewCommand } from './preview.ts';
import { startCommand } from './start.ts';
import { tokenTestCommand } from './token.ts';

export const commands: Command[] = [
  startCommand,
  pollEventsCommand,
  pollCredentialsCommand,
  deliverCommand,
  deliveriesListCommand,
  deliveriesRetryCommand,
  serveCommand,
  assetsToggleCommand,
  tokenTestCommand,
  configValidateCommand,
  configSchemaCommand,
  destinationsTestCommand,
  previewCommand,
  emulatorCommand,
];
