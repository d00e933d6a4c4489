import { z } from 'zod';
import { MODULE_ID_RE } from '../../modules/define-module.js';

const moduleId = z.string().regex(MODULE_ID_RE, 'must be a module id');
const config = z.record(z.string(), z.record(z.string(), z.unknown()), 'config must map module ids to settings');

/** /api/v1/modules/install/:module_id */
export const moduleParams = z.object({ module_id: moduleId });

/** Install (or plan) one module or several, with optional settings per module. */
export const moduleSelectionBody = z
  .strictObject({ module_id: moduleId.optional(), modules: z.array(moduleId).min(1).max(50).optional(), config: config.optional() })
  .refine((b) => Boolean(b.module_id) !== Boolean(b.modules), 'send module_id or modules (one of them)');

/** Plan or run one module's install: its settings, optional. */
export const moduleSettingsBody = z.strictObject({ config: z.record(z.string(), z.unknown()).optional() }).optional();

export const moduleUninstallBody = z
  .strictObject({ drop_data: z.boolean('drop_data must be true or false').optional(), force: z.boolean('force must be true or false').optional() })
  .optional();
