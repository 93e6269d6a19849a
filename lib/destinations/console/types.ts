/** What a terminal destination resolves to: its face (index.ts) and body share it, so neither imports the other. */
export interface ConsoleDestination {
  name: string;
  type: 'console';
  /** A dry run (`npm start -- --dry-run`): the kind this destination really is, printed, not sent. */
  standsFor?: string;
  /** A dry run's folder for each message's items, which `preview` renders as the destination would. */
  keepIn?: string;
}

/** What the terminal's renderer reads of the run (its face's `renderOptions`). */
export interface ConsoleOptions {
  /** The terminal takes ANSI colours. */
  color: boolean;
}
