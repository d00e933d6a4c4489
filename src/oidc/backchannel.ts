import { createHash, randomBytes } from 'node:crypto';
import { importJWK, SignJWT } from 'jose';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { ClientStore } from './clients.js';
import type { PrivateJwk } from './keys.js';

/** The outbox endpoint kind of a client's back-channel logout URI (webhook_endpoints.kind). */
export const BACKCHANNEL_KIND = 'oidc_backchannel_logout';
const EVENT = 'http://schemas.openid.net/event/backchannel-logout';
/** A logout token is signed when each attempt is sent, and lives this long (the spec recommends about two minutes). */
const TOKEN_TTL_SEC = 120;

/** The part of the webhook service core's own deliveries go through: its outbox, retries, lease and address rules. */
export interface LogoutOutbox {
  registerKind(kind: string, build: (payload: string) => Promise<{ body: string; contentType: string }>): void;
  enqueueSystem(d: { id: string; kind: string; url: string; type: string; payload: string }, tx: Transaction): Promise<void>;
}

/** One client to tell: the user (`sub`) and the session id it was given in its ID tokens (`sid`). */
export interface LogoutNotice {
  clientId: string;
  sub: string;
  sid: string;
}

interface StoredSession {
  accountId?: string;
  authorizations?: Record<string, { sid?: string }>;
}

/**
 * OpenID Connect Back-Channel Logout 1.0: when a Gatehouse session ends, for any reason (sign-out, revocation,
 * a password change, an admin's action, an RP-initiated logout), each client that signed in with it and
 * registered a `backchannel_logout_uri` is POSTed a logout token naming the user and the `sid` its ID tokens
 * carried. The notices are written to the webhook outbox in the unit of work that ended the session (a rolled-back
 * revocation tells nobody), one outbox endpoint per client (`kind` oidc_backchannel_logout, never listed with the
 * operator's), and delivered with its retries and address (SSRF) rules; the token is signed at each attempt, so a
 * retry an hour later is not stale.
 */
export function createBackchannel(deps: {
  sequelize: Sequelize;
  clients: Pick<ClientStore, 'backchannelUris' | 'findWithSecret'>;
  outbox: LogoutOutbox | null;
  issuer: string;
  /** The published keys, signers first. */
  keys(): Promise<PrivateJwk[]>;
  clock: () => Date;
}) {
  // webhook_endpoints.id holds 40 characters; a client id may be longer (a metadata document's URL).
  const endpointId = (clientId: string) => `oidc_bcl_${createHash('sha256').update(clientId).digest('base64url').slice(0, 30)}`;

  /** Writes a notice per client that registered a URI, in `tx` (or a transaction of its own). */
  async function enqueue(notices: LogoutNotice[], tx?: Transaction | null): Promise<number> {
    const outbox = deps.outbox;
    if (!outbox || !notices.length) return 0;
    const run = async (t: Transaction) => {
      const uris = await deps.clients.backchannelUris([...new Set(notices.map((n) => n.clientId))], t);
      let n = 0;
      for (const notice of notices) {
        const url = uris.get(notice.clientId);
        if (!url) continue;
        const payload = JSON.stringify({ client_id: notice.clientId, sub: notice.sub, sid: notice.sid, jti: randomBytes(16).toString('base64url') });
        await outbox.enqueueSystem({ id: endpointId(notice.clientId), kind: BACKCHANNEL_KIND, url, type: 'oidc.backchannel_logout', payload }, t);
        n++;
      }
      return n;
    };
    return tx ? run(tx) : deps.sequelize.transaction(run);
  }

  /** The notices for the provider sessions (one per browser) with these uids, or all of an account's, before they are deleted. */
  async function forSessions(where: { uids: string[] } | { accountId: string }, tx?: Transaction | null): Promise<number> {
    if (!deps.outbox || ('uids' in where && !where.uids.length)) return 0;
    const [sql, value] = 'uids' in where ? ['uid IN (?)', where.uids] : ['account_id = ?', where.accountId];
    const rows = await deps.sequelize.query<{ payload: string }>(`SELECT payload FROM oidc_artefacts WHERE model = 'Session' AND ${sql}`, {
      type: QueryTypes.SELECT,
      replacements: [value],
      transaction: tx ?? undefined,
    });
    const notices = rows.flatMap((r) => {
      const s = JSON.parse(r.payload) as StoredSession;
      const sub = s.accountId;
      if (!sub) return [];
      return Object.entries(s.authorizations ?? {}).flatMap(([clientId, a]) => (a.sid ? [{ clientId, sub, sid: a.sid }] : []));
    });
    return enqueue(notices, tx);
  }

  /** The body of one attempt: a logout token signed now with the key the client's ID tokens are signed with. */
  async function body(payload: string): Promise<{ body: string; contentType: string }> {
    const p = JSON.parse(payload) as { client_id: string; sub: string; sid: string; jti: string };
    const client = await deps.clients.findWithSecret(p.client_id);
    if (!client) throw new Error(`the client ${p.client_id} was removed`);
    const jwk = (await deps.keys()).find((k) => k.alg === client.id_token_alg);
    if (!jwk) throw new Error(`no ${client.id_token_alg} signing key`);
    const now = Math.floor(deps.clock().getTime() / 1000);
    const token = await new SignJWT({ sid: p.sid, events: { [EVENT]: {} } })
      .setProtectedHeader({ alg: jwk.alg, kid: jwk.kid, typ: 'logout+jwt' })
      .setIssuer(deps.issuer)
      .setAudience(p.client_id)
      .setSubject(p.sub)
      .setIssuedAt(now)
      .setExpirationTime(now + TOKEN_TTL_SEC)
      .setJti(p.jti)
      .sign(await importJWK(jwk, jwk.alg));
    return { body: new URLSearchParams({ logout_token: token }).toString(), contentType: 'application/x-www-form-urlencoded' };
  }

  deps.outbox?.registerKind(BACKCHANNEL_KIND, body);
  return { enqueue, forSessions };
}

export type Backchannel = ReturnType<typeof createBackchannel>;
