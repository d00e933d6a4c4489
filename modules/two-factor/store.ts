import { randomUUID } from 'node:crypto';
import { DataTypes, Op, type Model, type ModelStatic } from 'sequelize';
import { type ModuleContext, type Transaction } from '../../src/module-api.js';

const TABLE_OF = {
  Method: 'two_factor_methods',
  Challenge: 'two_factor_challenges',
  BackupCode: 'two_factor_backup_codes',
  Device: 'two_factor_trusted_devices',
} as const;

/** The module's four tables as Sequelize models (plain objects out; booleans and dates typed on both dialects). */

export type MethodKind = 'email' | 'sms' | 'totp' | 'backup_codes';
export type MethodStatus = 'pending_setup' | 'active';

export interface MethodRow {
  id: string;
  user_id: string;
  kind: MethodKind;
  status: MethodStatus;
  identifier: string | null;
  secret_enc: string | null;
  last_step: number | string | null;
  created_at: Date;
  verified_at: Date | null;
  last_used_at: Date | null;
}

export interface ChallengeRow {
  id: string;
  user_id: string;
  method_id: string;
  session_id: string | null;
  purpose: string;
  code_hash: string;
  attempts: number;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

export interface BackupCodeRow {
  id: string;
  user_id: string;
  method_id: string;
  code_hash: string;
  created_at: Date;
  used_at: Date | null;
}

export interface DeviceRow {
  id: string;
  user_id: string;
  token_hash: string;
  user_agent: string | null;
  created_at: Date;
  expires_at: Date;
  last_used_at: Date | null;
}

interface Models {
  Method: ModelStatic<Model>;
  Challenge: ModelStatic<Model>;
  BackupCode: ModelStatic<Model>;
  Device: ModelStatic<Model>;
}

const str = (n: number, allowNull = false) => ({ type: DataTypes.STRING(n), allowNull });
const date = (allowNull: boolean) => ({ type: DataTypes.DATE, allowNull });
const key = { type: DataTypes.STRING(36), primaryKey: true };

/** The module's four tables, through the context (which refuses any table the manifest does not declare). */
export function models(ctx: ModuleContext): Models {
  const db = ctx.db;
  return {
    Method: db.model('TwoFactorMethod', TABLE_OF.Method, {
      id: key,
      user_id: str(36),
      kind: str(16),
      status: str(16),
      identifier: str(254, true),
      secret_enc: { type: DataTypes.TEXT, allowNull: true },
      last_step: { type: DataTypes.BIGINT, allowNull: true },
      created_at: date(false),
      verified_at: date(true),
      last_used_at: date(true),
    }),
    Challenge: db.model('TwoFactorChallenge', TABLE_OF.Challenge, {
      id: key,
      user_id: str(36),
      method_id: str(36),
      session_id: str(36, true),
      purpose: str(16),
      code_hash: str(64),
      attempts: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      created_at: date(false),
      expires_at: date(false),
      used_at: date(true),
    }),
    BackupCode: db.model('TwoFactorBackupCode', TABLE_OF.BackupCode, {
      id: key,
      user_id: str(36),
      method_id: str(36),
      code_hash: str(64),
      lookup: { type: DataTypes.STRING(8), allowNull: true },
      created_at: date(false),
      used_at: date(true),
    }),
    Device: db.model('TwoFactorTrustedDevice', TABLE_OF.Device, {
      id: key,
      user_id: str(36),
      token_hash: str(64),
      user_agent: str(255, true),
      created_at: date(false),
      expires_at: date(false),
      last_used_at: date(true),
    }),
  };
}

const plain = <T>(r: Model | null): T | null => (r ? (r.get({ plain: true }) as T) : null);
const plainAll = <T>(rows: Model[]): T[] => rows.map((r) => r.get({ plain: true }) as T);
type Tx = { transaction?: Transaction };

export const store = {
  async methods(ctx: ModuleContext, userId: string, tx: Tx = {}): Promise<MethodRow[]> {
    return plainAll<MethodRow>(await models(ctx).Method.findAll({ where: { user_id: userId }, order: [['created_at', 'ASC']], ...tx }));
  },
  async method(ctx: ModuleContext, id: string, tx: Tx = {}): Promise<MethodRow | null> {
    return plain<MethodRow>(await models(ctx).Method.findByPk(id, tx));
  },
  async createMethod(ctx: ModuleContext, row: Omit<MethodRow, 'last_step' | 'verified_at' | 'last_used_at'> & Partial<MethodRow>, tx: Tx = {}): Promise<void> {
    await models(ctx).Method.create({ last_step: null, verified_at: null, last_used_at: null, ...row }, tx);
  },
  /** Deletes the user's unfinished setups of a kind (a new setup replaces them). */
  async dropPendingSetups(ctx: ModuleContext, userId: string, kind: MethodKind, tx: Tx = {}): Promise<void> {
    await models(ctx).Method.destroy({ where: { user_id: userId, kind, status: 'pending_setup' }, ...tx });
  },
  /** pending_setup → active, once (false when it already was or is gone). */
  async activateMethod(ctx: ModuleContext, id: string, at: Date, tx: Tx = {}): Promise<boolean> {
    const [n] = await models(ctx).Method.update({ status: 'active', verified_at: at, last_used_at: at }, { where: { id, status: 'pending_setup' }, ...tx });
    return n > 0;
  },
  async touchMethod(ctx: ModuleContext, id: string, at: Date): Promise<void> {
    await models(ctx).Method.update({ last_used_at: at }, { where: { id } });
  },
  /** Records a TOTP step as used; false when this or a later step was accepted already (a replay). */
  async useStep(ctx: ModuleContext, id: string, step: number, at: Date): Promise<boolean> {
    const [n] = await models(ctx).Method.update(
      { last_step: step, last_used_at: at },
      { where: { id, [Op.or]: [{ last_step: null }, { last_step: { [Op.lt]: step } }] } },
    );
    return n > 0;
  },
  async deleteMethod(ctx: ModuleContext, id: string, tx: Tx = {}): Promise<number> {
    return models(ctx).Method.destroy({ where: { id }, ...tx });
  },

  /* Challenges: one live per method and purpose */

  async createChallenge(ctx: ModuleContext, row: ChallengeRow): Promise<void> {
    const { Challenge } = models(ctx);
    await ctx.db.transaction(async (transaction) => {
      // Only the newest code works.
      await Challenge.update({ used_at: row.created_at }, { where: { method_id: row.method_id, purpose: row.purpose, used_at: null }, transaction });
      await Challenge.create({ ...row }, { transaction });
    });
  },
  async liveChallenge(ctx: ModuleContext, methodId: string, purpose: string, now: Date): Promise<ChallengeRow | null> {
    return plain<ChallengeRow>(
      await models(ctx).Challenge.findOne({
        where: { method_id: methodId, purpose, used_at: null, expires_at: { [Op.gt]: now } },
        order: [['created_at', 'DESC']],
      }),
    );
  },
  /** Counts one try on a challenge, atomically; false once `max` tries were made. */
  async addAttempt(ctx: ModuleContext, id: string, max: number): Promise<boolean> {
    const counted = await ctx.db.select(
      'UPDATE two_factor_challenges SET attempts = attempts + 1 WHERE id = ? AND used_at IS NULL AND attempts < ? RETURNING id',
      [id, max],
    );
    return counted.length > 0;
  },
  async closeChallenge(ctx: ModuleContext, id: string, at: Date): Promise<boolean> {
    const [n] = await models(ctx).Challenge.update({ used_at: at }, { where: { id, used_at: null } });
    return n > 0;
  },

  /* Backup codes */

  async replaceBackupCodes(ctx: ModuleContext, methodId: string, userId: string, codes: { hash: string; lookup: string }[], at: Date, tx: Tx): Promise<void> {
    const { BackupCode } = models(ctx);
    await BackupCode.destroy({ where: { method_id: methodId }, ...tx });
    await BackupCode.bulkCreate(
      codes.map((c) => ({ id: randomUUID(), user_id: userId, method_id: methodId, code_hash: c.hash, lookup: c.lookup, created_at: at, used_at: null })),
      tx,
    );
  },
  /** The unused codes whose lookup is this one (almost always none or one), with their salted hashes. */
  async backupCodesByLookup(ctx: ModuleContext, methodId: string, lookup: string): Promise<{ id: string; code_hash: string }[]> {
    const rows = await models(ctx).BackupCode.findAll({ where: { method_id: methodId, lookup, used_at: null }, attributes: ['id', 'code_hash'] });
    return rows.map((r) => plain<{ id: string; code_hash: string }>(r)).filter((r): r is { id: string; code_hash: string } => r !== null);
  },
  /** Uses up this backup code row, once among any number of requests at once (false when another got it first). */
  async useBackupCodeRow(ctx: ModuleContext, id: string, at: Date): Promise<boolean> {
    const [n] = await models(ctx).BackupCode.update({ used_at: at }, { where: { id, used_at: null } });
    return n > 0;
  },
  async unusedBackupCodes(ctx: ModuleContext, methodId: string): Promise<number> {
    return models(ctx).BackupCode.count({ where: { method_id: methodId, used_at: null } });
  },
  /** Uses up the unused backup code with this keyed hash (a code made before salted hashes), once (false for unknown or used). */
  async useBackupCode(ctx: ModuleContext, methodId: string, hash: string, at: Date): Promise<boolean> {
    const [n] = await models(ctx).BackupCode.update({ used_at: at }, { where: { method_id: methodId, code_hash: hash, used_at: null } });
    return n > 0;
  },

  /* Trusted devices */

  async addDevice(ctx: ModuleContext, row: DeviceRow): Promise<void> {
    await models(ctx).Device.create({ ...row });
  },
  async deviceByHash(ctx: ModuleContext, hash: string): Promise<DeviceRow | null> {
    return plain<DeviceRow>(await models(ctx).Device.findOne({ where: { token_hash: hash } }));
  },
  async touchDevice(ctx: ModuleContext, id: string, at: Date): Promise<void> {
    await models(ctx).Device.update({ last_used_at: at }, { where: { id } });
  },
  async devices(ctx: ModuleContext, userId: string): Promise<DeviceRow[]> {
    return plainAll<DeviceRow>(await models(ctx).Device.findAll({ where: { user_id: userId }, order: [['created_at', 'ASC']] }));
  },
  async forgetDevices(ctx: ModuleContext, userId: string, tx: Tx = {}): Promise<number> {
    return models(ctx).Device.destroy({ where: { user_id: userId }, ...tx });
  },

  /** Everything of a user (2FA reset, erasure). */
  async deleteAll(ctx: ModuleContext, userId: string, tx: Tx): Promise<number> {
    const m = models(ctx);
    await m.Device.destroy({ where: { user_id: userId }, ...tx });
    await m.BackupCode.destroy({ where: { user_id: userId }, ...tx });
    await m.Challenge.destroy({ where: { user_id: userId }, ...tx });
    return m.Method.destroy({ where: { user_id: userId }, ...tx });
  },
};
