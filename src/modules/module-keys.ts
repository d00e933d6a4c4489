import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { ModuleKeys } from './module-context-types.js';

/** A module's keys: HKDF-SHA256 over the server's secret, salted per module and purpose; AES-256-GCM sealing with them. */
export function moduleKeys(moduleId: string, secret: () => string): ModuleKeys {
  const derive = (purpose: string) => Buffer.from(hkdfSync('sha256', secret(), 'gatehouse-module-keys', `${moduleId}:${purpose}`, 32));
  return {
    derive,
    seal(plain, purpose) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', derive(purpose), iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
    },
    open(sealed, purpose) {
      const [v, iv, tag, body] = sealed.split('.');
      if (v !== 'v1' || !iv || !tag || body === undefined) throw new Error('not a sealed value');
      const decipher = createDecipheriv('aes-256-gcm', derive(purpose), Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}
