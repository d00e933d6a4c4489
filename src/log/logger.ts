import { pino, type Logger } from 'pino';
import { prettyStream } from './pretty.js';

/** Paths scrubbed from every log line: secrets never reach the logs in clear. */
export const REDACT_PATHS = [
  'password',
  '*.password',
  '*.new_password',
  '*.current_password',
  '*.token',
  'token',
  'req.headers["x-session-id"]',
  'req.headers["x-bridge-secret"]',
  'req.headers.cookie',
  'req.headers.authorization',
  'res.headers["set-cookie"]',
  'sessionId',
  'session_id',
  '*.sessionId',
  '*.session_id',
  'code',
  '*.code_value',
];

export type { Logger };

/** LOG_FORMAT: readable lines, or one JSON document per line (what journald, log shippers and jq read). */
export type LogFormat = 'pretty' | 'json';

let processFormat: LogFormat | undefined;

/**
 * The LOG_FORMAT the CLI loaded, for loggers created without one (serve's, the app context's
 * fallback): the configuration is loaded once per process, before any logger exists.
 */
export function useLogFormat(format: LogFormat | undefined): void {
  processFormat = format;
}

/**
 * A pino logger. Without a format (LOG_FORMAT unset), lines are readable when they go to a terminal
 * and JSON anywhere else (systemd's journal, a pipe, a container), so machines always get JSON.
 * Redaction applies to both: the pretty lines are made from the redacted JSON.
 */
export function createLogger(level: string, destination?: NodeJS.WritableStream & { isTTY?: boolean }, format = processFormat): Logger {
  const dest = destination ?? process.stdout;
  const pretty = (format ?? (dest.isTTY ? 'pretty' : 'json')) === 'pretty';
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    // Without a destination pino writes to fd 1 through its own fast stream; keep that for JSON.
    (pretty ? prettyStream(dest) : destination) as never,
  );
}
