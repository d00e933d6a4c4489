import { z } from 'zod';
import { durationSetting, type ModuleContext } from '../../src/module-api.js';

/** The module's settings; each is also `ORGANIZATIONS_<KEY>` in the environment. */
export const settingsSchema = z.object({
  /** Who may create organizations: `anyone` signed in, or `admin` (admin and superadmin user types). ORGANIZATIONS_CREATE. */
  create: z.enum(['anyone', 'admin']).default('anyone'),
  /** How long an invitation link works (1m to 90d; 3600, 12h, 7d). ORGANIZATIONS_INVITATION_TTL. */
  invitation_ttl: durationSetting(60, 90 * 86_400).default(7 * 86_400),
});

export type Settings = z.output<typeof settingsSchema>;
export const settings = (ctx: ModuleContext): Settings => ctx.config<Settings>();
