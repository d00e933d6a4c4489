import type { Request } from 'express';
import type { AuditService } from '../../audit/audit-service.js';
import { withAuditScope } from '../../audit/audit-scope.js';
import { normaliseIdentifier, THROTTLED_ONCE_PER_MS } from '../../services/sign-in-audit.js';
import { requestAuditScope } from '../request-audit.js';

/** Where a refusal can be recorded: the app's audit service (absent in contexts that record nothing). */
export interface ThrottleAuditDeps {
  services?: { audit?: Pick<AuditService, 'recordLater'> };
}

/** The sign-in routes whose refusal by a limit is a `sign_in.throttled`, by path: the method each signs in with. */
const SIGN_IN_PATHS: Record<string, string> = { '/auth/login': 'password', '/auth/token/validate': 'token' };

/** The sign-in method of a request to a sign-in route, else null. */
export const signInMethodOf = (req: Request): string | null => SIGN_IN_PATHS[req.path] ?? null;

/**
 * Records a sign-in a login limit refused (`sign_in.throttled`) after the answer, with the request as
 * its source (the handler's scope does not exist yet when middleware refuses). `limit` names the
 * budget (the route's class, or the per-account policy); the identifier only when the body was read.
 * Once per source, limit and identifier a minute: the refusals themselves are cheap, their records must be too.
 */
export function recordThrottled(deps: ThrottleAuditDeps, req: Request, limit: string, identifier?: string | null): void {
  const audit = deps.services?.audit;
  const method = signInMethodOf(req);
  if (!audit || !method) return;
  const named = identifier ? { identifier: normaliseIdentifier(identifier) } : {};
  withAuditScope(requestAuditScope(req, null), () =>
    audit.recordLater(
      { type: 'sign_in.throttled', outcome: 'failure', actor: null, details: { method, limit, ...named } },
      { oncePer: { key: `${limit}|${named.identifier ?? ''}`, ms: THROTTLED_ONCE_PER_MS } },
    ),
  );
}
