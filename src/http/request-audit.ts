import type { Request } from 'express';
import type { AuditActor } from '../audit/audit-types.js';
import type { AuditScope } from '../audit/audit-scope.js';
import { clientIp } from './middleware/client-ip.js';

/**
 * The audit scope of a request: the signed-in user (if any) as actor, the client address as `trust
 * proxy` resolves it, the user agent and the request id (echoed or generated, middleware/request-id.ts).
 * Every route handler runs in one, and most write nothing (validation): the address and agent are read
 * only when an event asks for them.
 */
class RequestScope implements AuditScope {
  readonly actor: AuditActor;
  private ipSeen: string | null | undefined;
  constructor(
    private readonly req: Request,
    user: { id: string; user_type: string } | null,
  ) {
    this.actor = user ? { id: user.id, user_type: user.user_type } : null;
  }
  get ip(): string | null {
    if (this.ipSeen === undefined) this.ipSeen = clientIp(this.req);
    return this.ipSeen;
  }
  get userAgent(): string | null {
    const ua = this.req.headers['user-agent'];
    return typeof ua === 'string' && ua ? ua : null;
  }
  get requestId(): string | null {
    return (this.req as { id?: string }).id ?? null;
  }
}

export function requestAuditScope(req: Request, user: { id: string; user_type: string } | null): AuditScope {
  return new RequestScope(req, user);
}
