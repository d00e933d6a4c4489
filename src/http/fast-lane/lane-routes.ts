import type { AnyRouteDef } from '../define-route.js';
import { hasReadBudget, BRIDGE_SECRET_HEADER, type ReadBudgetRule } from '../middleware/rate-limit-classes.js';
import { SESSION_TOKEN_HEADERS } from '../request-context.js';
import { me } from '../routes/auth.routes.js';
import { userMe } from '../routes/profile.routes.js';
import { bridgeValidate, validation, validationPost } from '../routes/session.routes.js';

/* What the validation fast lane (fast-lane.ts) answers, as the route definitions say it. */

/**
 * The headers no part of these routes' answers depends on, plus those read in answering them: the ones the
 * routes' pipeline reads (the session token's, the bridge secret's: taken from where the pipeline reads them)
 * and the app middleware's that the lane reproduces (request id, CORS, the JSON body).
 */
export const PLAIN_HEADERS = new Set<string>([
  ...SESSION_TOKEN_HEADERS,
  BRIDGE_SECRET_HEADER,
  'host',
  'connection',
  'user-agent',
  'accept',
  'accept-encoding',
  'accept-language',
  'sec-fetch-mode',
  'x-request-id',
  'origin',
  'content-type',
  'content-length',
  // What a reverse proxy adds to every request (Gatehouse's own nginx site, templates/nginx, sets the first
  // four): the address they name is read only for budgets per address and the audit, neither of which an
  // answer of the lane has.
  'x-real-ip',
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
  'x-forwarded-port',
  'forwarded',
  'via',
  // A CDN's or load balancer's (Cloudflare, AWS), a tracing client's (OpenTelemetry: W3C trace context),
  // a browser's (fetch metadata, client hints, Referer: read only by the CSRF check, which these routes skip).
  'cf-connecting-ip',
  'cf-ipcountry',
  'cf-ray',
  'cf-visitor',
  'cdn-loop',
  'true-client-ip',
  'x-amzn-trace-id',
  'traceparent',
  'tracestate',
  'baggage',
  'sec-fetch-site',
  'sec-fetch-dest',
  'sec-ch-ua',
  'sec-ch-ua-mobile',
  'sec-ch-ua-platform',
  'referer',
  'priority',
  'dnt',
  'cache-control',
  'pragma',
]);

/**
 * The five reads' own definitions, in the order of the lane's Route: the lane takes their method and path (its routing and the
 * metrics' template), auth mode (which need the bridge secret), body schema and budget rule from these,
 * never from a copy; whatever it does not answer runs their compiled pipeline (src/http/route-pipeline.ts).
 */
export const LANE_DEFS = [validation, validationPost, bridgeValidate, me, userMe] as const satisfies readonly AnyRouteDef[];

/**
 * The budget rule all five count in (validationRead's), read off their `rateLimit`; throws when they do not
 * share one, or when one has middleware of its own (which the lane would skip).
 */
export function laneBudget(): ReadBudgetRule {
  const rules = new Set(LANE_DEFS.map((d: AnyRouteDef) => (typeof d.rateLimit === 'function' && hasReadBudget(d.rateLimit) ? d.rateLimit.budget : null)));
  const [rule] = rules;
  if (rules.size !== 1 || !rule) throw new Error('fast lane: its routes must all count in one budget rule (validationRead)');
  for (const d of LANE_DEFS) if (d.middleware?.length) throw new Error(`fast lane: ${d.method.toUpperCase()} ${d.path} has middleware the lane would skip`);
  return rule;
}
