import { Writable } from 'node:stream';
import type { Logger } from '../log/logger.js';
import type { CliStreams } from './ui.js';

const ANSI = /\x1b\[[0-9;]*[A-Za-z]|\r/g;

/**
 * Streams for the Ui of `serve` when its output is not a terminal (systemd, a pipe, a container):
 * every line the Ui would print becomes a log entry, so the stream the logs go to holds log entries
 * only (JSON there by default; readable lines with LOG_FORMAT=pretty).
 * `warning: …` lines are logged at warn, the rest at info, whatever LOG_LEVEL says (except silent):
 * "listening", the superadmin hint and shutdown notes are what an operator looks for.
 */
export function logStreams(logger: Logger, base: CliStreams): CliStreams {
  const out = logger.child({ component: 'serve' }, { level: logger.level === 'silent' ? 'silent' : 'info' });
  const lines = new Writable({
    write(chunk, _enc, cb) {
      for (const raw of String(chunk).split('\n')) {
        const line = raw.replace(ANSI, '').trim();
        if (!line) continue;
        if (line.startsWith('warning: ')) out.warn(line.slice('warning: '.length));
        else out.info(line);
      }
      cb();
    },
  });
  return { stdout: lines, stderr: lines, stdin: base.stdin };
}
