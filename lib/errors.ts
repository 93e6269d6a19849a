/**
 * Errors that end a command with exit code 2: a bad invocation or a bad configuration. Messages
 * name what was wrong, as a path (`routes[1].match.colour`) or a variable name.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly code = 'usage';
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly code = 'config';
  /** Every problem found, one per line, each naming its path. */
  readonly problems: string[];
  constructor(message: string, problems: string[] = [message]) {
    super(message);
    this.problems = problems;
  }
}
