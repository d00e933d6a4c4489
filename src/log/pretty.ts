/**
 * Log lines for people: `12:03:04.512 INFO  GET /health 200 (3 ms)  req=7f…`. pino writes each entry
 * as one JSON line into this stream, which rewrites it; fields are kept (as key=value) except the
 * ones the line already shows or that only machines need (pid, hostname). Written here rather than
 * taken from pino-pretty: a screenful of code instead of a dozen packages, and no worker thread
 * (the single executable bundles everything into one file).
 */

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** ANSI colours by level, used only when the destination is a terminal. */
const COLORS: Record<number, string> = { 10: '90', 20: '36', 30: '32', 40: '33', 50: '31', 60: '35' };
const HIDDEN = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'v']);

type Entry = Record<string, unknown>;

const clock = (time: unknown): string => {
  const d = typeof time === 'string' || typeof time === 'number' ? new Date(time) : new Date();
  return Number.isNaN(d.getTime()) ? String(time) : d.toISOString().slice(11, 23);
};

const value = (v: unknown): string => {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  return JSON.stringify(v) ?? String(v);
};

/** An access entry (src/http/middleware/access-log.ts) as a request line; the rest of the entry stays as fields. */
function accessLine(e: Entry): { text: string; used: string[] } | null {
  const req = e.req as { id?: string; method?: string; url?: string } | undefined;
  const res = e.res as { statusCode?: number } | undefined;
  if (!req?.method || !res) return null;
  const ms = typeof e.responseTime === 'number' ? ` (${e.responseTime} ms)` : '';
  return { text: `${req.method} ${req.url ?? ''} ${res.statusCode ?? '-'}${ms}${req.id ? `  req=${req.id}` : ''}`, used: ['req', 'res', 'responseTime'] };
}

/** One JSON log line as a readable line (a line that is not JSON is passed through). */
export function formatEntry(line: string, color = false): string {
  let e: Entry;
  try {
    e = JSON.parse(line) as Entry;
  } catch {
    return line;
  }
  const level = typeof e.level === 'number' ? e.level : 30;
  const name = (LEVELS[level] ?? String(level)).padEnd(5);
  const tag = color ? `\x1b[${COLORS[level] ?? '0'}m${name}\x1b[0m` : name;
  const access = accessLine(e);
  const skip = new Set([...HIDDEN, ...(access?.used ?? []), 'err']);
  const fields = Object.entries(e)
    .filter(([k]) => !skip.has(k))
    .map(([k, v]) => `${k}=${value(v)}`);
  const err = e.err as { message?: string; stack?: string } | string | undefined;
  const errText = typeof err === 'string' ? err : err?.message;
  if (errText) fields.push(`err=${value(errText)}`);
  const msg = access ? access.text : String(e.msg ?? '');
  let out = `${clock(e.time)} ${tag} ${msg}${fields.length ? `  ${fields.join(' ')}` : ''}`;
  // The stack of a logged error, indented under its line (pino serialises it at every level).
  if (typeof err === 'object' && err?.stack)
    out += `\n${err.stack
      .split('\n')
      .slice(1)
      .map((l) => `    ${l.trim()}`)
      .join('\n')}`;
  return out;
}

/** A destination for pino that writes readable lines to `dest` (coloured when it is a terminal). */
export function prettyStream(dest: NodeJS.WritableStream & { isTTY?: boolean }): { write(chunk: string): boolean } {
  const color = Boolean(dest.isTTY);
  return {
    write(chunk: string) {
      const lines = chunk.split('\n').filter((l) => l.trim());
      return dest.write(lines.map((l) => `${formatEntry(l, color)}\n`).join(''));
    },
  };
}
