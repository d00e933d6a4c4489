import type { Config } from '../../config/schema.js';
import { LIMITS_RESET_KEY_HEADER, limitsResetKey } from '../../services/limit-reset.js';
import { CliError, UsageError } from '../errors.js';

const TIMEOUT_MS = 5000;

/** Where this host reaches the server: a wildcard bind is reached on loopback. */
export function localServerUrl(host: string, port: number): string {
  const h = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${h.includes(':') ? `[${h}]` : h}:${port}`;
}

/**
 * After `sessions revoke` without Redis: the running server of this data dir (if one answers) drops
 * its cached sessions. Returns whether a server answered; no server means nothing is cached.
 */
export async function forgetOnRunningServer(config: Config): Promise<boolean> {
  const key = limitsResetKey(config);
  if (!key) return false;
  try {
    const res = await fetch(`${localServerUrl(config.host, config.port)}/internal/sessions/forget`, {
      method: 'POST',
      headers: { [LIMITS_RESET_KEY_HEADER]: key },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    if (!res.ok)
      throw new CliError(`the running server refused to drop its cached sessions: ${res.status}`, 'restart it, or wait a minute for its copies to expire');
    return true;
  } catch (err) {
    if (err instanceof CliError) throw err;
    return false;
  }
}

/**
 * `limits reset` without Redis: POST /internal/limits/reset on the running server of this data dir,
 * with the key derived from config.json's secrets. Returns what the server cleared.
 */
export async function resetOnRunningServer(config: Config, opts: { email?: string; ip?: string; port?: string }): Promise<string[]> {
  const port = opts.port === undefined ? config.port : Number(opts.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new UsageError(`--port: not a port: ${opts.port}`);
  const key = limitsResetKey(config);
  if (!key) throw new CliError('no COOKIE_SECRET or BRIDGE_VALIDATION_SECRET in the configuration', 'run gatehouse init to generate them');
  const url = `${localServerUrl(config.host, port)}/internal/limits/reset`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', [LIMITS_RESET_KEY_HEADER]: key },
      body: JSON.stringify({ email: opts.email, ip: opts.ip }),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    // ECONNREFUSED and the like sit on the cause; a timeout is the error itself.
    const why = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
    throw new CliError(
      `no gatehouse serve answered on ${url} (${why}); without REDIS_URL the limits live in the running server's memory`,
      'start it (a stopped server holds no limits), or pass --port with the port it listens on',
    );
  }
  const body = (await res.json().catch(() => null)) as { cleared?: string[]; error?: string } | null;
  if (!res.ok || !Array.isArray(body?.cleared)) {
    throw new CliError(
      `the server refused the reset: ${res.status} ${body?.error ?? res.statusText}`,
      res.status === 401 ? 'the server runs with other secrets than this config.json: run the command with the same --data-dir' : undefined,
    );
  }
  return body.cleared;
}
