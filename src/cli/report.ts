import { ConfigError } from '../config/config.ts';
import { ApiError } from '../core/errors.ts';
import { type CliIo, UsageError } from './io.ts';

/**
 * The codes a CLI failure carries besides the API's own (an ApiError keeps its catalogue code):
 * `usage_error` (exit 2) the command was called wrongly; `config_error` (exit 2) an environment variable is invalid;
 * `runtime_error` (exit 1) anything else that stopped the command (a database that cannot be opened, a file system
 * error). The CLI runs on the operator's own machine, so the message is the error's own, as in plain-text mode.
 */
export type CliErrorCode = 'usage_error' | 'config_error' | 'runtime_error';

interface Failure {
  exitCode: 1 | 2;
  code: string;
  message: string;
  details?: Record<string, unknown>;
  /** Plain text only: lines after the message (the command's usage, validation issues). */
  more?: string;
}

function isParseArgsError(error: unknown): error is Error {
  return error instanceof Error && String((error as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS');
}

function describe(error: unknown): Failure {
  if (error instanceof UsageError) return { exitCode: 2, code: 'usage_error', message: error.message, more: error.usage };
  if (isParseArgsError(error)) return { exitCode: 2, code: 'usage_error', message: error.message };
  if (error instanceof ConfigError) return { exitCode: 2, code: 'config_error', message: error.message };
  if (error instanceof ApiError) {
    const issues = (error.details?.issues as Array<{ path: string; message: string }> | undefined) ?? [];
    // A single issue is the message already (see validationFailed): say it once.
    const lines = issues.map((i) => `  ${i.path}: ${i.message}`).filter((line) => line.trim() !== error.message);
    return {
      exitCode: error.code === 'validation_failed' ? 2 : 1,
      code: error.code,
      message: error.message,
      details: error.details,
      more: lines.length > 0 ? lines.join('\n') : undefined,
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { exitCode: 1, code: 'runtime_error', message, more: undefined };
}

/**
 * Writes why a command failed to stderr and returns its exit code: with `--json` one line `{"error": {"code",
 * "message", "details"?}}`, otherwise plain text as the commands have always written it.
 */
export function reportFailure(error: unknown, io: CliIo, asJson: boolean): number {
  const failure = describe(error);
  if (asJson) {
    const { code, message, details } = failure;
    io.err(JSON.stringify({ error: details === undefined ? { code, message } : { code, message, details } }));
  } else {
    const first = failure.code === 'runtime_error' ? `error: ${failure.message}` : failure.message;
    io.err(failure.more === undefined ? first : `${first}\n${failure.more}`);
  }
  return failure.exitCode;
}
