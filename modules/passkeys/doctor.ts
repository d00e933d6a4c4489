import type { ModuleContext, ModuleDoctorCheck } from '../../src/module-api.js';
import { relyingParty } from './settings.js';

const LOCAL = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The problems and warnings of a relying party: the RP ID must be the host of every web origin or a suffix of it. */
export function checkRelyingParty(rp: { id: string; origins: string[] }): { problems: string[]; warnings: string[] } {
  const problems: string[] = [];
  const warnings: string[] = [];
  for (const origin of rp.origins) {
    // App origins (android:apk-key-hash:…, ios:bundle-id:…) have no host to compare.
    if (!/^https?:\/\//i.test(origin)) continue;
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      problems.push(`${origin} is not a valid origin`);
      continue;
    }
    const host = url.hostname.toLowerCase();
    const id = rp.id.toLowerCase();
    if (host !== id && !host.endsWith(`.${id}`)) problems.push(`RP ID ${rp.id} is not a registrable suffix of ${host} (${origin})`);
    if (url.protocol === 'http:' && !LOCAL.has(host)) warnings.push(`${origin} is plain http: browsers offer passkeys only on https or localhost`);
  }
  return { problems, warnings };
}

export const doctorChecks: ModuleDoctorCheck[] = [
  {
    name: 'passkeys relying party',
    async run(ctx: ModuleContext) {
      const rp = relyingParty(ctx);
      const { problems, warnings } = checkRelyingParty(rp);
      if (problems.length) return { ok: false, message: problems.join('; ') };
      const base = `RP ID ${rp.id}, origins ${rp.origins.join(', ')}`;
      return { ok: true, message: warnings.length ? `${base}; warning: ${warnings.join('; ')}` : base };
    },
  },
];
