import type { Transaction } from 'sequelize';
import type { AppContext } from '../../src/app-context.js';
import { CORE_USER_ATTRIBUTES } from '../../src/data/models/user.model.js';

/** Core users columns in an export: all of them but the password hash. */
const EXPORTED_USER_COLUMNS = Object.keys(CORE_USER_ATTRIBUTES).filter((c) => c !== 'password_hash');

const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : v && typeof v === 'string' && /^\d{4}-\d{2}-\d{2}[ T]/.test(v) ? new Date(v).toISOString() : v);
const plainRow = (row: Record<string, unknown>) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, iso(v)]));

/** What core stores about a user: the user row (no password hash), sessions (no token hashes), token metadata. */
export async function exportCore(app: AppContext, userId: string) {
  const [rows] = await app.sequelize.query(`SELECT ${EXPORTED_USER_COLUMNS.join(', ')} FROM users WHERE id = ?`, { replacements: [userId] });
  const user = (rows as Record<string, unknown>[])[0];
  const sessions = await app.repos.sessions.listByUser(userId);
  const tokens = await app.models.AuthToken.findAll({ where: { user_id: userId }, order: [['created_at', 'DESC']] });
  return {
    user: user ? plainRow(user) : null,
    sessions: sessions.map((s) => ({
      id: s.id,
      session_prefix: s.session_prefix,
      status: s.status,
      ip_address: s.ip_address,
      user_agent: s.user_agent,
      user_device: s.user_device,
      created_at: iso(s.created_at),
      last_used_at: iso(s.last_used_at),
      expires_at: iso(s.expires_at),
    })),
    auth_tokens: tokens.map((t) => {
      const v = t.get({ plain: true }) as Record<string, unknown>;
      return {
        id: v.id,
        kind: v.kind,
        channel: v.channel ?? null,
        identifier: v.identifier ?? null,
        attempts: v.attempts,
        created_at: iso(v.created_at),
        expires_at: iso(v.expires_at),
        used_at: iso(v.used_at) ?? null,
      };
    }),
  };
}

/** Columns an erasure clears; the row stays (anonymized) so foreign keys and audit history hold. */
const CLEARED = [
  'name', 'last_name', 'user_name', 'picture', 'phone', 'lang', 'metadata', 'tmz', 'dob', 'display_name', 'gender', 'title',
  'reference_id', 'recovery_email', 'password_hash',
];

/** Anonymizes the user row and deletes one-time tokens; sessions are revoked after commit (caches too). */
export async function eraseCore(app: AppContext, userId: string, reason: string, transaction: Transaction): Promise<void> {
  const now = new Date();
  await app.sequelize.query(
    `UPDATE users SET email = ?, ${CLEARED.map((c) => `${c} = NULL`).join(', ')}, two_factor = ?, deleted_at = ?, deletion_reason = ?, updated_at = ? WHERE id = ?`,
    { replacements: [`deleted-${userId}@invalid`, false, now, reason, now, userId], transaction },
  );
  await app.models.AuthToken.destroy({ where: { user_id: userId }, transaction });
}
