import { pino, type Logger } from 'pino';

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

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination as never,
  );
}
