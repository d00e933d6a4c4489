import { QueryTypes, type Sequelize } from 'sequelize';
import type { Store } from '../cache/cache.js';
import { sha256 } from '../services/security/tokens.js';

/** What oidc-provider stores: its payload (a plain JSON object) and the fields the adapter indexes. */
export interface AdapterPayload {
  [key: string]: unknown;
  grantId?: string;
  userCode?: string;
  uid?: string;
  accountId?: string;
  consumed?: number;
}

/** oidc-provider's adapter contract (docs: "adapter"). */
export interface OidcAdapter {
  upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void>;
  find(id: string): Promise<AdapterPayload | undefined>;
  findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
  findByUid(uid: string): Promise<AdapterPayload | undefined>;
  /**
   * Marks the artefact consumed, as one compare-and-set on every instance: true for the one call that
   * marked it, false for every other (already consumed, or gone). oidc-provider's own contract returns
   * nothing; the provider's adapter (provider.ts) turns false into `invalid_grant` and revokes the grant.
   */
  consume(id: string): Promise<boolean>;
  destroy(id: string): Promise<void>;
  revokeByGrantId(grantId: string): Promise<void>;
  /** Saves the artefact only where none (unexpired) has this id, as one step on every instance: true for the one call that saved it. */
  claim?(id: string, payload: AdapterPayload, expiresIn: number): Promise<boolean>;
}

/**
 * Short-lived artefacts (a code lives a minute, an interaction an hour): in the shared store when there is
 * Redis, so every instance sees them without a database write per sign-in; in the database otherwise
 * (one process's memory would not be seen by a second instance). Redis holds their only copy, so they go
 * through the Store, which fails loudly, never through the Cache, which reads a fault as a miss.
 */
export const SHORT_LIVED = new Set(['AuthorizationCode', 'Interaction', 'PushedAuthorizationRequest', 'ReplayDetection']);

/** The models oidc-provider consumes (single use): a second consume of one id loses. */
export const CONSUMABLE = new Set(['AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest', 'PushedAuthorizationRequest']);

/**
 * What the provider issues within one of its sessions (one browser's): the session itself and the
 * tokens that carry its uid (`sessionUid`). Their `uid` column holds that uid, so that what one
 * session issued ends with it (oidc.ts, `revokeSessions`).
 */
export const SESSION_BOUND = ['Session', 'AuthorizationCode', 'AccessToken', 'RefreshToken'];

/**
 * Gatehouse's own row beside the provider's: which Gatehouse session a provider session is used with
 * (id: the provider session's uid; `uid` column: the Gatehouse session's id). Kept while that
 * Gatehouse session exists (pruneArtefacts).
 */
export const SESSION_LINK = 'SessionLink';

/**
 * The models whose id is itself the bearer credential (the token a client presents, the code, the
 * request_uri), found only by that id: stored under its SHA-256, never in clear, so a copy of the
 * database or of Redis holds no usable token (the ids are 256-bit random, so one unsalted hash is
 * enough). The provider's Session, Interaction and DeviceCode are also found by uid or user code,
 * and stay keyed by id (docs/keys.md says so).
 */
export const HASHED_IDS = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'ClientCredentials',
  'BackchannelAuthenticationRequest',
  'PushedAuthorizationRequest',
]);

/**
 * An adapter that keys rows by `sha256(id)` and keeps the id (`jti`) out of the stored payload, giving it
 * back on a find. Rows saved in clear before this (an upgrade's live refresh tokens) are still found,
 * consumed and destroyed by their id, and end with their lifetime.
 */
export function withHashedIds(a: OidcAdapter): OidcAdapter {
  const stored = (p: AdapterPayload): AdapterPayload => {
    const { jti: _jti, ...kept } = p;
    return kept;
  };
  const found = async (id: string): Promise<AdapterPayload | undefined> => {
    const p = await a.find(sha256(id));
    if (p) return { ...p, jti: id };
    return a.find(id);
  };
  return {
    upsert: (id, payload, expiresIn) => a.upsert(sha256(id), stored(payload), expiresIn),
    find: found,
    findByUserCode: (code) => a.findByUserCode(code),
    findByUid: (uid) => a.findByUid(uid),
    consume: async (id) => (await a.consume(sha256(id))) || (await a.consume(id)),
    async destroy(id) {
      await a.destroy(sha256(id));
      await a.destroy(id);
    },
    revokeByGrantId: (grantId) => a.revokeByGrantId(grantId),
    // No `claim`: it serves ReplayDetection and client assertions' jti, whose ids are not credentials.
  };
}

interface Row {
  payload: string;
  consumed_at: Date | string | null;
  expires_at: Date | string | null;
}

const epoch = (d: Date) => Math.floor(d.getTime() / 1000);

/** The database half: one table, `oidc_artefacts`, keyed by model and id; raw SQL with `?` on both dialects. */
export function createDbAdapter(sequelize: Sequelize, model: string, clock: () => Date): OidcAdapter {
  const select = (where: string, value: string) =>
    sequelize.query<Row>(`SELECT payload, consumed_at, expires_at FROM oidc_artefacts WHERE model = ? AND ${where} = ?`, {
      type: QueryTypes.SELECT,
      replacements: [model, value],
    });
  const read = async (where: string, value: string): Promise<AdapterPayload | undefined> => {
    const [row] = await select(where, value);
    if (!row) return undefined;
    if (row.expires_at && new Date(row.expires_at).getTime() <= clock().getTime()) return undefined;
    const payload = JSON.parse(row.payload) as AdapterPayload;
    if (row.consumed_at) payload.consumed = epoch(new Date(row.consumed_at));
    return payload;
  };
  return {
    async upsert(id, payload, expiresIn) {
      const expires = expiresIn ? new Date(clock().getTime() + expiresIn * 1000) : null;
      // Tokens carry their provider session's uid as `sessionUid`: indexed in `uid` (SESSION_BOUND).
      const uid = payload.uid ?? (typeof payload.sessionUid === 'string' ? payload.sessionUid : null);
      const values = [JSON.stringify(payload), payload.grantId ?? null, payload.userCode ?? null, uid, payload.accountId ?? null, expires];
      // One statement on both dialects: a delete-then-insert lets two saves of one id at once (two requests of
      // one browser) both insert on PostgreSQL, and the second fails on the key. The whole row is replaced,
      // `consumed_at` too (oidc-provider's payload replaces what was stored).
      await sequelize.query(
        'INSERT INTO oidc_artefacts (model, id, payload, grant_id, user_code, uid, account_id, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ' +
          'ON CONFLICT (model, id) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id, user_code = excluded.user_code, ' +
          'uid = excluded.uid, account_id = excluded.account_id, expires_at = excluded.expires_at, consumed_at = NULL',
        { replacements: [model, id, ...values] },
      );
    },
    async claim(id, payload, expiresIn) {
      const now = clock();
      // An expired row (not yet pruned) is taken over; a live one is not. RETURNING answers only the statement that wrote.
      // (The leading comment: Sequelize's SQLite dialect runs a statement that starts with INSERT without reading its rows.)
      const won = await sequelize.query<{ id: string }>(
        '/* claim */ INSERT INTO oidc_artefacts (model, id, payload, expires_at) VALUES (?, ?, ?, ?) ' +
          'ON CONFLICT (model, id) DO UPDATE SET payload = excluded.payload, expires_at = excluded.expires_at, consumed_at = NULL ' +
          'WHERE oidc_artefacts.expires_at IS NOT NULL AND oidc_artefacts.expires_at <= ? RETURNING id',
        { type: QueryTypes.SELECT, replacements: [model, id, JSON.stringify(payload), new Date(now.getTime() + expiresIn * 1000), now] },
      );
      return won.length === 1;
    },
    find: (id) => read('id', id),
    findByUserCode: (code) => read('user_code', code),
    findByUid: (uid) => read('uid', uid),
    async consume(id) {
      // RETURNING on both dialects (SQLite 3.35+): the row comes back only to the one statement that changed it.
      const marked = await sequelize.query<{ id: string }>(
        'UPDATE oidc_artefacts SET consumed_at = ? WHERE model = ? AND id = ? AND consumed_at IS NULL RETURNING id',
        { type: QueryTypes.SELECT, replacements: [clock(), model, id] },
      );
      return marked.length === 1;
    },
    async destroy(id) {
      await sequelize.query('DELETE FROM oidc_artefacts WHERE model = ? AND id = ?', { replacements: [model, id] });
    },
    async revokeByGrantId(grantId) {
      // Every model of the grant goes (oidc-provider calls this on one model; the others follow).
      await sequelize.query('DELETE FROM oidc_artefacts WHERE grant_id = ?', { replacements: [grantId] });
    },
  };
}

/** The Redis half, for SHORT_LIVED models when instances share Redis: a fault is a 503, never a lost artefact. */
export function createStoreAdapter(store: Store, model: string, clock: () => Date): OidcAdapter {
  const key = (id: string) => `oidc:${model}:${id}`;
  /** The consume marker: set once (SET NX) by the one call that wins, for every instance. */
  const consumedKey = (id: string) => `oidc:${model}:${id}:consumed`;
  const get = async (id: string): Promise<AdapterPayload | undefined> => {
    const raw = await store.get(key(id));
    return raw ? (JSON.parse(raw) as AdapterPayload) : undefined;
  };
  const ttlOf = (p: AdapterPayload) => (typeof p.exp === 'number' ? Math.max(1, p.exp - epoch(clock())) : 3600);
  return {
    async upsert(id, payload, expiresIn) {
      await store.set(key(id), JSON.stringify(payload), expiresIn ?? ttlOf(payload));
      // A save replaces the whole payload, consumed or not (as in the database): a consumable's marker goes with it.
      if (CONSUMABLE.has(model)) await store.del(consumedKey(id));
    },
    claim: (id, payload, expiresIn) => store.add(key(id), JSON.stringify(payload), expiresIn),
    find: get,
    async findByUserCode() {
      return undefined;
    },
    async findByUid() {
      return undefined;
    },
    async consume(id) {
      const p = await get(id);
      if (!p || p.consumed) return false;
      const at = epoch(clock());
      // The marker decides; the payload is then written consumed so that a later find sees it (a replay
      // between the two finds the marker here and loses too).
      if (!(await store.add(consumedKey(id), String(at), ttlOf(p)))) return false;
      await store.set(key(id), JSON.stringify({ ...p, consumed: at }), ttlOf(p));
      return true;
    },
    async destroy(id) {
      await store.del(key(id));
      await store.del(consumedKey(id));
    },
    async revokeByGrantId() {
      // Codes are found again through their grant, which lives in the database: revoking the grant there is enough.
    },
  };
}

/** Deletes expired artefacts, and the links to Gatehouse sessions that have ended (signed out, expired). */
export async function pruneArtefacts(sequelize: Sequelize, now: Date): Promise<void> {
  await sequelize.query('DELETE FROM oidc_artefacts WHERE expires_at IS NOT NULL AND expires_at < ?', { replacements: [now] });
  await sequelize.query('DELETE FROM oidc_artefacts WHERE model = ? AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = oidc_artefacts.uid)', {
    replacements: [SESSION_LINK],
  });
}
