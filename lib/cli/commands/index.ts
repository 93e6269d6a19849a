/** Every CLI command, in the order `help` lists them. */
import type { Command } from '../command.ts';
import { emulatorCommand } from './emulator.ts';
import { tokenTestCommand } from './token.ts';

export const commands: Command[] = [tokenTestCommand, emulatorCommand];
