import type { Transaction } from 'sequelize';
import type { AppContext } from '../../src/app-context.js';
import { CORE_USER_ATTRIBUTES } from '../../src/data/models/user.model.js';

/** Core users columns in an export: all of them but the password hash. */
const EXPORTED_USER_COLUMNS = Object.keys(CORE_USER_ATTRIBUTES).filter((c) => c !== 'password_hash');

const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : v);
const plainRow = (row: Record<string, unknown>) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, iso(v)]));

/** What core stores about a user: the user row (no password hash), sessions (no token hashes), token metadata. */
export async function exportCore(app: AppContext, userId: string) {
  // Through the repository, so booleans, JSON and dates come back typed on both dialects.
  const record = await app.repos.users.findById(userId, { includeDeleted: true });
  const user = record ? Object.fromEntries(EXPORTED_USER_COLUMNS.map((c) => [c, record[c] ?? null])) : null;
  const sessions = await app.repos.sessions.listByUser(userId);
  const tokens = await app.models.AuthToken.findAll({ where: { user_id: userId }, order: [['created_at', 'DESC']] });
  return {
    user: user ? plainRow(user) : null,
    // Every column but the hashes of secrets (session token, one-time token and code).
    sessions: sessions.map(({ token_hash: _secret, ...rest }) => plainRow(rest as Record<string, unknown>)),
    auth_tokens: tokens.map((t) => {
      const { token_hash: _t, code_hash: _c, ...rest } = t.get({ plain: true }) as Record<string, unknown>;
      return plainRow(rest);
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
