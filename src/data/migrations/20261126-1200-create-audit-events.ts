import { DataTypes } from 'sequelize';
import type { MigrationDef } from '../migration-types.js';

/**
 * The security-event record (src/audit). Ids are time-ordered (UUIDv7), so "newest first" and the
 * keyset cursor are one index on `id`; each filter the admin query offers has an index that ends in
 * `id`, so a page is an index range read whatever the table's size.
 */
export const createAuditEvents: MigrationDef = {
  name: '20261126-1200-create-audit-events',
  async up({ queryInterface: qi, transaction }) {
    await qi.createTable(
      'audit_events',
      {
        id: { type: DataTypes.STRING(36), primaryKey: true },
        type: { type: DataTypes.STRING(100), allowNull: false },
        at: { type: DataTypes.DATE, allowNull: false },
        outcome: { type: DataTypes.STRING(16), allowNull: false },
        actor_id: { type: DataTypes.STRING(36), allowNull: true },
        actor_type: { type: DataTypes.STRING(32), allowNull: true },
        actor_via: { type: DataTypes.STRING(16), allowNull: true },
        user_id: { type: DataTypes.STRING(36), allowNull: true },
        ip: { type: DataTypes.STRING(64), allowNull: true },
        user_agent: { type: DataTypes.STRING(512), allowNull: true },
        request_id: { type: DataTypes.STRING(128), allowNull: true },
        // The normalised identifier of a sign-in to an unknown account (details.identifier on the wire):
        // a column, so that erasure finds a person's past attempts without reading every event.
        identifier: { type: DataTypes.STRING(254), allowNull: true },
        details: { type: DataTypes.TEXT, allowNull: false },
      },
      { transaction },
    );
    await qi.addIndex('audit_events', ['user_id', 'id'], { name: 'audit_events_user', transaction });
    await qi.addIndex('audit_events', ['actor_id', 'id'], { name: 'audit_events_actor', transaction });
    await qi.addIndex('audit_events', ['type', 'id'], { name: 'audit_events_type', transaction });
    await qi.addIndex('audit_events', ['ip', 'id'], { name: 'audit_events_ip', transaction });
    await qi.addIndex('audit_events', ['at'], { name: 'audit_events_at', transaction });
    await qi.addIndex('audit_events', ['identifier'], { name: 'audit_events_identifier', transaction });
  },
  async down({ queryInterface: qi, transaction }) {
    await qi.dropTable('audit_events', { transaction });
  },
};
