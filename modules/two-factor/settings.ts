import { z } from 'zod';
import { durationSetting, type ModuleContext } from '../../src/module-api.js';
import type { MethodKind } from './store.js';

export const KINDS = ['email', 'sms', 'totp', 'backup_codes'] as const satisfies readonly MethodKind[];
/** Methods that stand on their own; backup codes are a way back in, not a reason to turn 2FA on. */
export const PRIMARY_KINDS: readonly MethodKind[] = ['email', 'sms', 'totp'];

export const settingsSchema = z.object({
  /** Methods users may set up (GET /system lists them). */
  methods: z
    .array(z.enum(KINDS))
    .min(1)
    .default([...KINDS]),
  /** Lifetime of an emailed or texted code, in seconds. */
  code_ttl: z.number().int().min(60).max(3600).default(600),
  /** Wrong codes a sent code survives; the next one voids it. */
  max_attempts: z.number().int().min(1).max(10).default(5),
  /** Wrong codes one user may make across all challenges and methods per window (atomic on every backend). */
  user_attempts: z.number().int().min(1).max(100).default(5),
  user_attempts_window: z.number().int().min(60).max(86_400).default(900),
  /** Codes one email or SMS method may be sent per user_attempts_window. */
  sends_per_method: z.number().int().min(1).max(1000).default(10),
  /**
   * How long a device trusted at the second step skips it for its user (1h to 365d; 3600, 12h, 30d).
   * The environment names it TWO_FACTOR_TRUSTED_DEVICE_TTL or, as before it moved out of core, TRUSTED_DEVICE_TTL.
   */
  trusted_device_ttl: durationSetting(3600, 365 * 86_400)
    .default(30 * 86_400)
    .meta({ env: 'TRUSTED_DEVICE_TTL' }),
});

export type Settings = z.output<typeof settingsSchema>;
export const settings = (ctx: ModuleContext): Settings => ctx.config<Settings>();
