import { DataTypes } from 'sequelize';
import type { MigrationDef } from '../migration-types.js';

/**
 * Signed webhooks (src/webhooks): the operator's endpoints, a durable outbox written in the same
 * transaction as the audit event it carries, and a log of every delivery attempt. The secret is
 * sealed (AES-256-GCM): it must be recovered to sign, so it cannot be hashed.
 */
export const createWebhooks: MigrationDef = {
  name: '20261126-1300-create-webhooks',
  async up({ queryInterface: qi, transaction }) {
    await qi.createTable(
      'webhook_endpoints',
      {
        id: { type: DataTypes.STRING(40), primaryKey: true },
        url: { type: DataTypes.STRING(2048), allowNull: false },
        description: { type: DataTypes.STRING(500), allowNull: true },
        events: { type: DataTypes.TEXT, allowNull: false },
        secret_sealed: { type: DataTypes.TEXT, allowNull: false },
        // During a rotation the old secret signs too, until this moment (24 h).
        previous_secret_sealed: { type: DataTypes.TEXT, allowNull: true },
        previous_secret_expires_at: { type: DataTypes.DATE, allowNull: true },
        include_ip_user_agent: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        enabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
        disabled_reason: { type: DataTypes.STRING(500), allowNull: true },
        created_at: { type: DataTypes.DATE, allowNull: false },
        // Since when every attempt has failed (null after any success): 5 days of it disables the endpoint.
        failing_since: { type: DataTypes.DATE, allowNull: true },
      },
      { transaction },
    );
    await qi.createTable(
      'webhook_messages',
      {
        // The webhook-id header: the same on every retry of one message.
        id: { type: DataTypes.STRING(40), primaryKey: true },
        endpoint_id: {
          type: DataTypes.STRING(40),
          allowNull: false,
          references: { model: 'webhook_endpoints', key: 'id' },
          onDelete: 'CASCADE',
        },
        event_id: { type: DataTypes.STRING(36), allowNull: true },
        type: { type: DataTypes.STRING(100), allowNull: false },
        // The exact body sent, so every retry signs and sends the same bytes.
        payload: { type: DataTypes.TEXT, allowNull: false },
        status: { type: DataTypes.STRING(16), allowNull: false },
        attempts: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        next_attempt_at: { type: DataTypes.DATE, allowNull: false },
        locked_until: { type: DataTypes.DATE, allowNull: true },
        lock_holder: { type: DataTypes.STRING(64), allowNull: true },
        created_at: { type: DataTypes.DATE, allowNull: false },
      },
      { transaction },
    );
    // The worker's claim reads pending messages in due order.
    await qi.addIndex('webhook_messages', ['status', 'next_attempt_at'], { name: 'webhook_messages_due', transaction });
    await qi.addIndex('webhook_messages', ['endpoint_id', 'created_at'], { name: 'webhook_messages_endpoint', transaction });
    await qi.addIndex('webhook_messages', ['created_at'], { name: 'webhook_messages_created', transaction });
    await qi.createTable(
      'webhook_deliveries',
      {
        id: { type: DataTypes.STRING(40), primaryKey: true },
        message_id: {
          type: DataTypes.STRING(40),
          allowNull: false,
          references: { model: 'webhook_messages', key: 'id' },
          onDelete: 'CASCADE',
        },
        attempt: { type: DataTypes.INTEGER, allowNull: false },
        at: { type: DataTypes.DATE, allowNull: false },
        status_code: { type: DataTypes.INTEGER, allowNull: true },
        duration_ms: { type: DataTypes.INTEGER, allowNull: false },
        error: { type: DataTypes.STRING(500), allowNull: true },
        response_body: { type: DataTypes.STRING(1024), allowNull: true },
      },
      { transaction },
    );
    await qi.addIndex('webhook_deliveries', ['message_id', 'attempt'], { name: 'webhook_deliveries_message', transaction });
    await qi.addIndex('webhook_deliveries', ['at'], { name: 'webhook_deliveries_at', transaction });
  },
  async down({ queryInterface: qi, transaction }) {
    await qi.dropTable('webhook_deliveries', { transaction });
    await qi.dropTable('webhook_messages', { transaction });
    await qi.dropTable('webhook_endpoints', { transaction });
  },
};
