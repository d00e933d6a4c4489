import { DataTypes } from 'sequelize';
import type { MigrationDef } from '../migration-types.js';

/**
 * Gatehouse as an OpenID provider (src/oidc, docs/oidc.md): the provider's artefacts (grants, codes,
 * refresh tokens, sessions, interactions…) keyed by model and id, with the indexes oidc-provider's
 * adapter contract looks them up by (grant id, user code, uid) and an expiry for the clean-up; the
 * registered clients (secret hashed); and the signing keys (private JWKs sealed with the server's secret).
 */
export const createOidc: MigrationDef = {
  name: '20261126-1400-create-oidc',
  async up({ queryInterface: qi, transaction }) {
    await qi.createTable(
      'oidc_artefacts',
      {
        model: { type: DataTypes.STRING(40), primaryKey: true },
        id: { type: DataTypes.STRING(200), primaryKey: true },
        payload: { type: DataTypes.TEXT, allowNull: false },
        grant_id: { type: DataTypes.STRING(200), allowNull: true },
        user_code: { type: DataTypes.STRING(200), allowNull: true },
        uid: { type: DataTypes.STRING(200), allowNull: true },
        account_id: { type: DataTypes.STRING(36), allowNull: true },
        consumed_at: { type: DataTypes.DATE, allowNull: true },
        expires_at: { type: DataTypes.DATE, allowNull: true },
      },
      { transaction },
    );
    await qi.addIndex('oidc_artefacts', ['grant_id'], { name: 'oidc_artefacts_grant_id', transaction });
    await qi.addIndex('oidc_artefacts', ['user_code'], { name: 'oidc_artefacts_user_code', transaction });
    await qi.addIndex('oidc_artefacts', ['uid'], { name: 'oidc_artefacts_uid', transaction });
    await qi.addIndex('oidc_artefacts', ['account_id'], { name: 'oidc_artefacts_account_id', transaction });
    await qi.addIndex('oidc_artefacts', ['expires_at'], { name: 'oidc_artefacts_expires_at', transaction });
    await qi.createTable(
      'oidc_clients',
      {
        client_id: { type: DataTypes.STRING(64), primaryKey: true },
        name: { type: DataTypes.STRING(200), allowNull: false },
        // JSON: redirect_uris, post_logout_redirect_uris, grant_types…
        metadata: { type: DataTypes.TEXT, allowNull: false },
        // SHA-256 of the secret (a 256-bit random value): null for a public client.
        secret_hash: { type: DataTypes.STRING(64), allowNull: true },
        public_client: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        first_party: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        created_at: { type: DataTypes.DATE, allowNull: false },
        updated_at: { type: DataTypes.DATE, allowNull: false },
      },
      { transaction },
    );
    await qi.createTable(
      'oidc_keys',
      {
        kid: { type: DataTypes.STRING(64), primaryKey: true },
        alg: { type: DataTypes.STRING(16), allowNull: false },
        // The private JWK, sealed (AES-256-GCM under a key derived from the server's secret).
        private_sealed: { type: DataTypes.TEXT, allowNull: false },
        created_at: { type: DataTypes.DATE, allowNull: false },
        // Published from created_at, signs from signs_from until a newer key of its alg signs.
        signs_from: { type: DataTypes.DATE, allowNull: false },
      },
      { transaction },
    );
  },
  async down({ queryInterface: qi, transaction }) {
    await qi.dropTable('oidc_keys', { transaction });
    await qi.dropTable('oidc_clients', { transaction });
    await qi.dropTable('oidc_artefacts', { transaction });
  },
};
