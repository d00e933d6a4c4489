import { DataTypes } from 'sequelize';
import type { MigrationDef } from '../../../src/module-api.js';

const id = { type: DataTypes.STRING(36), primaryKey: true };
const userRef = (allowNull: boolean) => ({ type: DataTypes.STRING(36), allowNull, references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' });
const when = (allowNull: boolean) => ({ type: DataTypes.DATE, allowNull });

export const TABLES = ['passkey_credentials', 'passkey_challenges'];

/**
 * Passkeys (WebAuthn credentials: the public key is not a secret, but it is never exported) and the
 * challenges handed out for them (SHA-256 of the challenge, single use, bound to a purpose and, for a
 * registration, to the user).
 */
export const createPasskeysTables: MigrationDef = {
  name: '20261126-1300-create-passkeys-tables',
  async up({ queryInterface: qi, transaction }) {
    await qi.createTable(
      'passkey_credentials',
      {
        id,
        user_id: userRef(false),
        credential_id: { type: DataTypes.STRING(1400), allowNull: false, unique: true },
        public_key: { type: DataTypes.TEXT, allowNull: false },
        counter: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
        transports: { type: DataTypes.STRING(200), allowNull: true },
        device_type: { type: DataTypes.STRING(16), allowNull: false },
        backed_up: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        aaguid: { type: DataTypes.STRING(36), allowNull: true },
        name: { type: DataTypes.STRING(100), allowNull: false },
        created_at: when(false),
        last_used_at: when(true),
      },
      { transaction },
    );
    await qi.addIndex('passkey_credentials', ['user_id'], { name: 'passkey_credentials_user', transaction });
    await qi.createTable(
      'passkey_challenges',
      {
        id,
        challenge_hash: { type: DataTypes.STRING(64), allowNull: false, unique: true },
        purpose: { type: DataTypes.STRING(16), allowNull: false },
        user_id: userRef(true),
        created_at: when(false),
        expires_at: when(false),
        used_at: when(true),
      },
      { transaction },
    );
    await qi.addIndex('passkey_challenges', ['user_id'], { name: 'passkey_challenges_user', transaction });
  },
  async down({ queryInterface: qi, transaction }) {
    await qi.dropTable('passkey_challenges', { transaction });
    await qi.dropTable('passkey_credentials', { transaction });
  },
};
