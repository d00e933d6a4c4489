import { randomUUID } from 'node:crypto';
import { DataTypes, type Model, type ModelStatic } from 'sequelize';
import type { ModuleContext, Transaction } from '../../src/module-api.js';

export interface Actor {
  actor: 'self' | 'admin' | 'system';
  actorId: string | null;
}

/** The consent history table (the module's own, through its context). */
export function eventModel(ctx: ModuleContext): ModelStatic<Model> {
  return ctx.db.model('PrivacyConsentEvent', 'privacy_consent_events', {
    id: { type: DataTypes.STRING(36), primaryKey: true },
    user_id: { type: DataTypes.STRING(36), allowNull: false },
    kind: { type: DataTypes.STRING(40), allowNull: false },
    details: DataTypes.JSON,
    actor: { type: DataTypes.STRING(16), allowNull: false },
    actor_id: DataTypes.STRING(36),
    created_at: { type: DataTypes.DATE, allowNull: false },
  });
}

export async function recordEvent(
  ctx: ModuleContext,
  e: { userId: string; kind: string; details?: Record<string, unknown>; by: Actor; at?: Date },
  transaction?: Transaction,
): Promise<void> {
  await eventModel(ctx).create(
    { id: randomUUID(), user_id: e.userId, kind: e.kind, details: e.details ?? {}, actor: e.by.actor, actor_id: e.by.actorId, created_at: e.at ?? new Date() },
    { transaction },
  );
}

const obj = (v: unknown) => {
  if (typeof v === 'string') {
    try {
      return JSON.parse(v) as Record<string, unknown>;
    } catch {
      return {};
    }
  }
  return (v ?? {}) as Record<string, unknown>;
};

export async function listEvents(ctx: ModuleContext, userId: string, page: number, limit: number) {
  const { rows, count } = await eventModel(ctx).findAndCountAll({
    where: { user_id: userId },
    order: [
      ['created_at', 'DESC'],
      ['id', 'DESC'],
    ],
    limit,
    offset: (page - 1) * limit,
  });
  return {
    total: count,
    events: rows.map((r) => {
      const v = r.get({ plain: true }) as Record<string, unknown>;
      return {
        id: v.id,
        kind: v.kind,
        details: obj(v.details),
        actor: v.actor,
        actor_id: v.actor_id ?? null,
        created_at: new Date(v.created_at as string).toISOString(),
      };
    }),
  };
}
