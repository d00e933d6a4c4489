/** A failure the CLI reports in one line (plus an optional hint) and turns into an exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    public readonly hint?: string,
    public readonly exitCode: number = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** Wrong or missing arguments: exit code 2, like commander's own usage errors. */
export class UsageError extends CliError {
  constructor(message: string, hint?: string) {
    super(message, hint, 2);
    this.name = 'UsageError';
  }
}
