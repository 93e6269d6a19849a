/**
 * Errors that end a command with exit code 2: a bad invocation or a bad configuration. Messages
 * name what was wrong, as a path (`routes[1].match.colour`) or a variable name.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly code = 'usage';
}

/** What the command was asked to act on does not exist (a silence id, a delivery id): exit code 1. */
export class NotFoundError extends Error {
  override readonly name = 'NotFoundError';
  readonly code = 'not_found';
}

/**
 * An AWS SDK failure that is the caller's setup, not the service: no region, no credentials. Said
 * as one line naming what to set (exit code 2), never as the SDK's own message alone; `local` is
 * the way to the local DynamoDB instead (the CLI knows whether the caller already stands by it).
 *
 * @example
 * awsSetupProblem(new Error('Region is missing')) // 'no AWS region: set AWS_REGION ...'
 */
export function awsSetupProblem(
  error: unknown,
  local = 'or run the command in the folder of npm start to use its local DynamoDB',
): string | undefined {
  if (!(error instanceof Error)) return undefined;
  if (error.message === 'Region is missing' || error.name === 'RegionMissing')
    return `no AWS region: set AWS_REGION (or AWS_PROFILE naming a profile with a region), ${local}`;
  if (error.name === 'CredentialsProviderError' || /Could not load credentials/.test(error.message))
    return `no AWS credentials: set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, ${local}`;
  return undefined;
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
