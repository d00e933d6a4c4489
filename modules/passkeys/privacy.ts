import type { ModuleEraser, ModuleExporter } from '../../src/module-api.js';
import { row, store } from './store.js';

/** A user's passkeys in their export: name, dates and device type; never the public key or credential id. */
export const exportPasskeys: ModuleExporter['run'] = async ({ ctx, userId }) => {
  const rows = (await store(ctx).Credential.findAll({ where: { user_id: userId }, order: [['created_at', 'ASC']] })).map(row);
  return rows.map((r) => ({
    name: r.name,
    created_at: new Date(r.created_at).toISOString(),
    last_used_at: r.last_used_at ? new Date(r.last_used_at).toISOString() : null,
    device_type: r.device_type,
    backed_up: r.backed_up,
  }));
};

/** Erasure: the user's passkeys and any challenge handed out for them. */
export const erasePasskeys: ModuleEraser['run'] = async ({ ctx, userId, tx }) => {
  const { Credential, Challenge } = store(ctx);
  await Credential.destroy({ where: { user_id: userId }, transaction: tx });
  await Challenge.destroy({ where: { user_id: userId }, transaction: tx });
};
