/** Every CLI command, in the order `help` lists them. */
import type { Command } from '../command.ts';
import { assetsToggleCommand, serveCommand } from './api.ts';
import { destinationsTestCommand } from './destinations.ts';
import { emulatorCommand } from './emulator.ts';
import {
  deliverCommand,
  deliveriesListCommand,
  deliveriesRetryCommand,
  pollCredentialsCommand,
  pollEventsCommand,
} from './poll.ts';
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
  destinationsTestCommand,
  emulatorCommand,
];
