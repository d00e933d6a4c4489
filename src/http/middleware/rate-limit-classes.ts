import type { Request } from 'express';
import type { RateLimitClass } from '../../limits/limit-classes.js';
import { secretMatcher, sha256 } from '../../services/security/tokens.js';
import { readSessionToken } from '../request-context.js';
import { classifier, type ClassifierDeps, type LimitTarget, type RateLimitClassifier } from './rate-limit.js';
import { addressKey } from './rate-limit-request.js';

/*
 * Classifiers for routes whose budget depends on who calls, not only on the route (docs/rate-limits.md,
 * "Trusted backends and sessions"). A route declares one as its `rateLimit`; the gate runs it before
 * the body is read, so it sees headers, query and cookie only.
 */

interface BridgeKey {
  matches: (given: unknown) => boolean;
  /** The bucket key of the configured secret: a digest, so the secret never sits in Redis. */
  key: string;
}
const bridgeKeys = new WeakMap<ClassifierDeps['config'], BridgeKey | null>();

export function bridgeKeyOf(config: ClassifierDeps['config']): BridgeKey | null {
  let k = bridgeKeys.get(config);
  if (k === undefined) {
    const secret = config.bridgeSecret;
    k = secret ? { matches: secretMatcher(secret), key: `secret:${sha256(secret).slice(0, 32)}` } : null;
    bridgeKeys.set(config, k);
  }
  return k;
}

/** The header that carries the bridge secret: read by the route pipeline's bridge stage and by the budgets below. */
export const BRIDGE_SECRET_HEADER = 'x-bridge-secret';

/**
 * The budget rule of the validation reads, as data: what the gate's classifier (validationRead) counts
 * and what the fast lane (src/http/fast-lane), which answers those reads' cache hits itself, reads off
 * the routes' own `rateLimit` instead of keeping a copy.
 */
export interface ReadBudgetRule {
  /**
   * By the bridge-secret header alone: `secret` (the right one), `wrong-secret`, or null (none sent, or
   * none configured: `matches` null; then the session decides). `matches` compares in constant time.
   */
  bySecret(sent: unknown, matches: ((sent: string) => boolean) | null): 'secret' | 'wrong-secret' | null;
  /** The right secret: one budget for the secret, keyed by its digest. */
  readonly secretClass: RateLimitClass;
  /** A wrong secret: per address. */
  readonly wrongSecretClass: RateLimitClass;
  /** A session that validates: per session (`session:<id>`). */
  readonly sessionClass: RateLimitClass;
  /** Anything else (no or a dead session): per address. */
  readonly otherwiseClass: RateLimitClass;
}

const readBudget: ReadBudgetRule = {
  bySecret(sent, matches) {
    if (!matches || typeof sent !== 'string' || sent === '') return null;
    return matches(sent) ? 'secret' : 'wrong-secret';
  },
  secretClass: 'bridge',
  wrongSecretClass: 'bridge-invalid',
  sessionClass: 'session',
  otherwiseClass: 'default',
};

/** Whether a classifier counts by a read budget rule (`validationRead`): the fast lane reads its rule. */
export const hasReadBudget = (c: RateLimitClassifier): c is RateLimitClassifier & { readonly budget: ReadBudgetRule } => 'budget' in c;

/**
 * Validation reads (bridge validate, GET/POST /auth/validation, the current-user reads). Backends call
 * them for every request they serve, all from one address, and offices share one NAT address, so:
 * - with the right X-Bridge-Secret: `bridge`, one budget for the secret, large;
 * - with a wrong one: `bridge-invalid`, per address, small (someone is guessing);
 * - with a session that validates: `session`, per session;
 * - anything else (no or a dead session): `default`, per address.
 * Its rule is `readBudget` (above), attached as `budget` for the fast lane.
 */
export const validationRead: RateLimitClassifier & { readonly budget: ReadBudgetRule } = Object.assign(
  classifier(
    [readBudget.secretClass, readBudget.wrongSecretClass, readBudget.sessionClass, readBudget.otherwiseClass],
    async (req, deps): Promise<LimitTarget> => {
      const bridge = bridgeKeyOf(deps.config);
      const bySecret = readBudget.bySecret(req.headers[BRIDGE_SECRET_HEADER], bridge?.matches ?? null);
      if (bySecret === 'secret' && bridge) return { cls: readBudget.secretClass, key: bridge.key };
      if (bySecret === 'wrong-secret') return { cls: readBudget.wrongSecretClass, key: addressKey(req) };
      const session = await liveSessionId(req, deps);
      return session ? { cls: readBudget.sessionClass, key: `session:${session}` } : { cls: readBudget.otherwiseClass, key: addressKey(req) };
    },
  ),
  { budget: readBudget },
);

/** The id of the request's session when it validates; null otherwise (a look-up that changes nothing). */
async function liveSessionId(req: Request, deps: ClassifierDeps): Promise<string | null> {
  try {
    return await deps.services.sessions.liveSessionId(readSessionToken(req).token);
  } catch {
    // The store failed: count per address; the route itself then answers the outage.
    return null;
  }
}

/**
 * POST /auth/register: with a session it is the admin create (`admin`), without one public sign-up
 * (`registration`). The gate only sees whether a token is sent; the handler charges `registration`
 * as well when a sent token turns out not to be an admin's (see consumeClassOrThrow), so no sign-up escapes it.
 */
export const registrationOrAdmin: RateLimitClassifier = classifier(['registration', 'admin'], (req): LimitTarget => ({
  cls: readSessionToken(req).token ? 'admin' : 'registration',
  key: addressKey(req),
}));

/** A class counted per live session (pending ones included) when the request carries one, else per address. */
export function perSession(cls: RateLimitClass): RateLimitClassifier {
  return classifier([cls], async (req, deps) => {
    const id = await liveSessionId(req, deps);
    return { cls, key: id ? `session:${id}` : addressKey(req) };
  });
}
