import type { Request } from 'express';
import type { AuditScope } from '../audit/audit-scope.js';
import { clientIp } from './middleware/client-ip.js';

/**
 * The audit scope of a request: the signed-in user (if any) as actor, the client address as `trust
 * proxy` resolves it, the user agent and the request id (echoed or generated, middleware/request-id.ts).
 */
export function requestAuditScope(req: Request, user: { id: string; user_type: string } | null): AuditScope {
  const ua = req.headers['user-agent'];
  return {
    actor: user ? { id: user.id, user_type: user.user_type } : null,
    ip: clientIp(req),
    userAgent: typeof ua === 'string' && ua ? ua : null,
    requestId: (req as { id?: string }).id ?? null,
  };
}
