import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';

/**
 * AES-256-GCM with a key derived (HKDF-SHA256) from a server secret, for provider tokens and PKCE
 * verifiers at rest. Output: `v1.<iv>.<tag>.<ciphertext>` (base64url); `purpose` binds a value to its
 * use, so a stored access token can never be decrypted as something else.
 */
export function createSealer(secret: string, purpose: string) {
  const key = Buffer.from(hkdfSync('sha256', secret, 'gatehouse-social', `gatehouse:${purpose}`, 32));
  return {
    seal(plain: string): string {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
    },
    /** null when the value was not sealed by this key for this purpose (or was tampered with). */
    open(sealed: string | null | undefined): string | null {
      const parts = typeof sealed === 'string' ? sealed.split('.') : [];
      if (parts.length !== 4 || parts[0] !== VERSION) return null;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(parts[1], 'base64url'));
        decipher.setAuthTag(Buffer.from(parts[2], 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(parts[3], 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        return null;
      }
    },
  };
}

export type Sealer = ReturnType<typeof createSealer>;
