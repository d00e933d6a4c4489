import { isIP } from 'node:net';
import { z } from 'zod';
import { weakness } from './secret-strength.js';

// How a configuration value is read from its text (the environment, config.json): the readers the
// key tables in keys-*.ts (gathered in schema.ts) are built from. Each turns a bad value into a message naming the fix.

export const bool = z.preprocess((v) => {
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(s)) return true;
    if (['0', 'false', 'no', 'off', ''].includes(s)) return false;
  }
  return v;
}, z.boolean());

export const int = (min: number, max: number) => {
  const error = `expected a whole number from ${min} to ${max}`;
  return z.preprocess((v) => (typeof v === 'string' && v.trim() !== '' ? Number(v) : v), z.number({ error }).int(error).min(min, error).max(max, error));
};

const DURATION_RE = /^(\d+)\s*(ms|s|m|h|d)?$/;
/** A byte size such as `100kb`, `1mb`, `512b` (BODY_LIMIT); parsed by the JSON body reader. */
export const SIZE_PATTERN = /^(\d+)(b|kb|mb)$/i;
const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 };

/** Parses "90", "15m", "7d" into seconds. */
export function parseDuration(value: string | number): number | null {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : null;
  const m = DURATION_RE.exec(value.trim());
  if (!m) return null;
  return Number(m[1]) * UNIT_SECONDS[m[2] ?? 's'];
}

/** A duration given as seconds or with a unit (s, m, h, d); parsed to whole seconds. */
export const duration = (minSeconds: number, maxSeconds: number) =>
  z.union([z.string(), z.number()]).transform((v, ctx) => {
    const s = parseDuration(v);
    if (s === null) {
      ctx.addIssue({ code: 'custom', message: 'expected a duration such as 3600, 90s, 15m, 1h or 7d' });
      return z.NEVER;
    }
    if (s < minSeconds || s > maxSeconds) {
      ctx.addIssue({ code: 'custom', message: `must be between ${minSeconds}s and ${maxSeconds}s` });
      return z.NEVER;
    }
    return Math.round(s);
  });

export const url = (protocols: string[]) =>
  z.string().refine(
    (v) => {
      try {
        return protocols.includes(new URL(v).protocol.replace(':', ''));
      } catch {
        return false;
      }
    },
    { message: `expected a URL (${protocols.join(', ')})` },
  );

export const list = z.preprocess(
  (v) =>
    typeof v === 'string'
      ? v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : v,
  z.array(z.string()),
);

/** "false" | hop count | comma list of CIDR/addresses, as Express understands it. */
export const trustProxy = z.preprocess(
  (v) => {
    if (typeof v === 'boolean') return v ? 1 : false;
    if (typeof v === 'string') {
      const s = v.trim().toLowerCase();
      if (s === '' || s === 'false' || s === '0' || s === 'no') return false;
      if (s === 'true') return 1;
      if (/^\d+$/.test(s)) return Number(s);
      return s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);
    }
    return v;
  },
  z.union([
    z.literal(false),
    z.number().int().min(1).max(10),
    z.array(z.string().refine(isProxyAddress, { message: 'expected addresses or CIDRs (or loopback, linklocal, uniquelocal)' })),
  ]),
);

/** What Express's `trust proxy` list accepts; checked here so a typo fails at startup, not in Express. */
function isProxyAddress(entry: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(entry)) return true;
  const [ip, range, ...rest] = entry.split('/');
  const family = isIP(ip);
  if (!family || rest.length > 0) return false;
  if (range === undefined) return true;
  if (/^\d+$/.test(range)) return Number(range) <= (family === 4 ? 32 : 128);
  return family === 4 && isIP(range) === 4;
}

/** A rate limit written as "attempts/window", e.g. "5/15m". */
export const rateLimit = z.string().transform((v, ctx) => {
  const m = /^(\d+)\s*\/\s*(.+)$/.exec(v.trim());
  const seconds = m ? parseDuration(m[2]) : null;
  if (!m || seconds === null || seconds < 1 || Number(m[1]) < 1) {
    ctx.addIssue({ code: 'custom', message: 'expected "attempts/window", e.g. 5/15m' });
    return z.NEVER;
  }
  return { points: Number(m[1]), durationSec: Math.round(seconds) };
});

/** A secret the doctor would pass (secret-strength.ts): refused at start instead of warned about later. */
export const strongSecret = z.string().superRefine((v, ctx) => {
  const w = weakness(v);
  if (w) ctx.addIssue({ code: 'custom', message: `${w}; generate one with: openssl rand -base64 32` });
});

/** Comma-separated seconds (WEBHOOK_RETRY_SCHEDULE): at least one, each from 0 to 7 days. */
export const webhookSchedule = z.union([z.string(), z.array(z.number())]).transform((v, ctx) => {
  const parts = Array.isArray(v) ? v.map(String) : v.split(',').map((s) => s.trim());
  const secs = parts.map((p) => (/^\d+(\.\d+)?$/.test(p) ? Number(p) : NaN));
  if (!secs.length || secs.length > 50 || secs.some((n) => !Number.isFinite(n) || n > 7 * 86400)) {
    ctx.addIssue({ code: 'custom', message: 'expected comma-separated seconds such as 0,5,300 (each at most 604800, at most 50)' });
    return z.NEVER;
  }
  return secs;
});
