import { DataTypes } from 'sequelize';
import type { MigrationDef } from '../migration-types.js';

/**
 * What an outbox endpoint is: `webhook` (the operator's, signed per Standard Webhooks, listed and managed as
 * before) or a delivery core makes for itself through the same outbox, retries and address rules, never
 * listed with the operator's: `oidc_backchannel_logout` (an OpenID client's back-channel logout URI, one
 * row per client, src/oidc/backchannel.ts).
 */
export const addWebhookEndpointKind: MigrationDef = {
  name: '20261207-1100-add-webhook-endpoint-kind',
  async up({ queryInterface: qi, transaction }) {
    await qi.addColumn('webhook_endpoints', 'kind', { type: DataTypes.STRING(32), allowNull: false, defaultValue: 'webhook' }, { transaction });
  },
  async down({ queryInterface: qi, transaction }) {
    await qi.sequelize.query("DELETE FROM webhook_endpoints WHERE kind <> 'webhook'", { transaction });
    // Raw DROP COLUMN: removeColumn rebuilds the table on SQLite (docs/modules.md).
    await qi.sequelize.query('ALTER TABLE webhook_endpoints DROP COLUMN kind', { transaction });
  },
};
