import { z } from 'zod';
import type { ModuleContext } from '../../src/module-api.js';

export const settingsSchema = z.object({
  /** The relying party id (a host name); empty means the host of the public URL. PASSKEYS_RP_ID or WEBAUTHN_RP_ID. */
  rp_id: z.string().trim().max(253).default('').meta({ env: 'WEBAUTHN_RP_ID' }),
  /** The name authenticators show; empty means the product name. */
  rp_name: z.string().trim().max(100).default('').meta({ env: 'WEBAUTHN_RP_NAME' }),
  /** Allowed origins, comma-separated (web origins, app origins such as android:apk-key-hash:…); empty means the public URL's origin. */
  origins: z.string().trim().max(4000).default('').meta({ env: 'WEBAUTHN_ORIGINS' }),
});

export type Settings = z.output<typeof settingsSchema>;

export interface RelyingParty {
  id: string;
  name: string;
  origins: string[];
}

/** The relying party as configured, each part falling back on the public URL and the product name. */
export function relyingParty(ctx: ModuleContext): RelyingParty {
  const s = ctx.config<Settings>();
  const publicUrl = new URL(ctx.site.publicBaseUrl);
  const origins = s.origins
    .split(',')
    .map((o) => o.trim().replace(/\/+$/, ''))
    .filter(Boolean);
  return {
    id: s.rp_id || publicUrl.hostname,
    name: s.rp_name || ctx.site.productName,
    origins: origins.length ? origins : [publicUrl.origin],
  };
}
