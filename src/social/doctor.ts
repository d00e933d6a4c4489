import type { Config } from '../config/schema.js';
import { endpointsFor } from './endpoints.js';
import { PROVIDERS } from './providers/index.js';
import { PROVIDER_IDS } from './settings.js';

const LOOPBACK = /^http:\/\/(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?\//i;

/** What `doctor` finds wrong with the social login settings: problems (fail) and warnings. */
export function socialProblems(config: Config): { problems: string[]; warnings: string[] } {
  const problems: string[] = [];
  const warnings: string[] = [];
  const configured = PROVIDER_IDS.filter((id) => config.socialAuth[id]);
  if (config.socialLogin && !configured.length) problems.push('SOCIAL_LOGIN is on but SOCIAL_AUTH configures no provider');
  if (configured.length && !config.cookieSecret && !config.bridgeSecret)
    problems.push('COOKIE_SECRET is needed to keep sign-in state and provider tokens sealed');
  for (const id of PROVIDER_IDS) {
    const s = config.socialAuth[id];
    if (!s) continue;
    const def = PROVIDERS[id];
    problems.push(...(def.check?.(s) ?? []));
    const endpoints = endpointsFor(id, s);
    for (const key of def.requiredEndpoints) if (!endpoints[key]) problems.push(`${id}: endpoints.${key} is required`);
    for (const [key, url] of Object.entries(endpoints)) {
      if (url && /^http:/i.test(url) && !LOOPBACK.test(url)) warnings.push(`${id}: endpoints.${key} is plain http (${url})`);
    }
  }
  if (configured.length && /^http:/i.test(config.publicBaseUrl) && !LOOPBACK.test(`${config.publicBaseUrl}/`)) {
    warnings.push('PUBLIC_URL is plain http: providers send codes to its callback in clear, and Apple refuses it');
  }
  return { problems, warnings };
}
