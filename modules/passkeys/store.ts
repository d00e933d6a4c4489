import { DataTypes } from 'sequelize';
import type { ModuleContext } from '../../src/module-api.js';

export interface CredentialRow {
  id: string;
  user_id: string;
  credential_id: string;
  public_key: string;
  counter: number;
  transports: string | null;
  device_type: string;
  backed_up: boolean;
  aaguid: string | null;
  name: string;
  created_at: Date;
  last_used_at: Date | null;
}

const date = (allowNull: boolean) => ({ type: DataTypes.DATE, allowNull });

/** The module's two models, over its own tables (declared in the manifest). */
export function store(ctx: ModuleContext) {
  const Credential = ctx.db.model('PasskeyCredential', 'passkey_credentials', {
    id: { type: DataTypes.STRING(36), primaryKey: true },
    user_id: { type: DataTypes.STRING(36), allowNull: false },
    credential_id: { type: DataTypes.STRING(1400), allowNull: false },
    public_key: { type: DataTypes.TEXT, allowNull: false },
    // BIGINT comes back as a string on PostgreSQL: read through `row()`.
    counter: { type: DataTypes.BIGINT, allowNull: false },
    transports: { type: DataTypes.STRING(200), allowNull: true },
    device_type: { type: DataTypes.STRING(16), allowNull: false },
    backed_up: { type: DataTypes.BOOLEAN, allowNull: false },
    aaguid: { type: DataTypes.STRING(36), allowNull: true },
    name: { type: DataTypes.STRING(100), allowNull: false },
    created_at: date(false),
    last_used_at: date(true),
  });
  const Challenge = ctx.db.model('PasskeyChallenge', 'passkey_challenges', {
    id: { type: DataTypes.STRING(36), primaryKey: true },
    challenge_hash: { type: DataTypes.STRING(64), allowNull: false },
    purpose: { type: DataTypes.STRING(16), allowNull: false },
    user_id: { type: DataTypes.STRING(36), allowNull: true },
    created_at: date(false),
    expires_at: date(false),
    used_at: date(true),
  });
  return { Credential, Challenge };
}

/** A stored credential with its types as declared (SQLite answers 0/1, PostgreSQL BIGINT as a string). */
export function row(m: { get(opts: { plain: true }): unknown }): CredentialRow {
  const r = m.get({ plain: true }) as CredentialRow;
  return { ...r, counter: Number(r.counter), backed_up: Boolean(r.backed_up) };
}

/** What a user and the API see of a passkey: never the public key or the credential's raw data. */
export function view(r: CredentialRow) {
  const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);
  return {
    id: r.id,
    name: r.name,
    created_at: iso(r.created_at),
    last_used_at: iso(r.last_used_at),
    backed_up: r.backed_up,
    device_type: r.device_type,
    transports: r.transports ? r.transports.split(',') : [],
  };
}
