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

  /**
   * The message and, on lines of their own, every problem it stands for, exactly as
   * `config validate` prints them: one problem is as worth naming as ten.
   *
   * @example
   * new ConfigError('alerts.config.json is invalid (1 problem)', ['routes[1].match.colour: unknown key']).detail
   * // 'alerts.config.json is invalid (1 problem):\n  routes[1].match.colour: unknown key'
   */
  get detail(): string {
    const listed = this.problems.filter((p) => p !== this.message);
    return listed.length ? `${this.message}:\n  ${listed.join('\n  ')}` : this.message;
  }
}

/**
 * One line saying what failed, for an error of any origin: which service and request, which
 * status, what it said. An AWS SDK error whose body could not be read is named only
 * `UnknownError`; the request and status are what make it actionable.
 *
 * @example
 * describeError(dynamoError) // 'DynamoDB BatchWriteItem failed: UnknownError (HTTP 500)'
 */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const sdk = error as Error & {
    $metadata?: { httpStatusCode?: number };
    $service?: string;
    $operation?: string;
  };
  if (sdk.$metadata) {
    const status = sdk.$metadata.httpStatusCode;
    // The SDK's own text can run to several lines of advice for developers; the first says what happened.
    const first = error.message.split('\n')[0]?.trim();
    const said = first && first !== error.name ? `: ${first}` : '';
    return `${sdk.$service ?? 'AWS'} ${sdk.$operation ?? 'request'} failed: ${error.name}${status ? ` (HTTP ${status})` : ''}${said}`;
  }
  if (error.message) return error.message;
  return error.name;
}
