import { generateKeyPair, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { QueryTypes, type Sequelize } from 'sequelize';
import type { Sealer } from '../social/crypto.js';

/** The signing algorithms: RS256 (every client can verify it; the default) and ES256. */
export const SIGNING_ALGS = ['RS256', 'ES256'] as const;
export type SigningAlg = (typeof SIGNING_ALGS)[number];

export type PrivateJwk = Record<string, unknown> & { kid: string; alg: string; kty: string };

interface KeyRow {
  kid: string;
  alg: string;
  private_sealed: string;
  created_at: Date | string;
  signs_from: Date | string;
}

export interface KeySet {
  /** For oidc-provider's `jwks`: each alg's signing key first, then the published others (pending and retiring). */
  keys: PrivateJwk[];
  /** Changes when a key is added, starts signing or stops being published (the provider is rebuilt). */
  fingerprint: string;
}

export interface KeyInfo {
  kid: string;
  alg: string;
  state: 'signing' | 'pending' | 'retiring' | 'expired';
  created_at: string;
  signs_from: string;
}

/**
 * The modulus of a new RS256 key, in bits: 3,072 (ASVS 5.0 11.2.3, 128-bit security, as NIST SP 800-57
 * pairs it). Keys made before at 2,048 bits go on verifying and signing until a rotation retires them.
 */
export const RSA_MODULUS_BITS = 3072;

const generatePair = promisify(generateKeyPair);

/** A new private JWK; made off the event loop (a 3,072-bit RSA key takes most of a second). */
async function generate(alg: SigningAlg): Promise<PrivateJwk> {
  const pair = alg === 'RS256' ? await generatePair('rsa', { modulusLength: RSA_MODULUS_BITS }) : await generatePair('ec', { namedCurve: 'P-256' });
  const jwk = pair.privateKey.export({ format: 'jwk' }) as Record<string, unknown>;
  return { ...jwk, kty: String(jwk.kty), kid: randomBytes(12).toString('base64url'), alg, use: 'sig' };
}

/**
 * Signing keys in `oidc_keys`, the private JWK sealed. A key is published from its creation, signs from
 * `signs_from` (a rotation's grace period, so relying parties that cache the JWKS see it first) until a newer
 * key of its algorithm signs, and stays published `retainSec` after that (the longest life of a token it signed).
 */
export function createKeyStore(deps: { sequelize: Sequelize; sealer: Sealer; clock: () => Date; retainSec: number }) {
  const { sequelize, sealer, clock } = deps;
  const rows = () =>
    sequelize.query<KeyRow>('SELECT kid, alg, private_sealed, created_at, signs_from FROM oidc_keys ORDER BY signs_from DESC, created_at DESC', {
      type: QueryTypes.SELECT,
    });

  async function insert(alg: SigningAlg, signsFrom: Date): Promise<string> {
    const jwk = await generate(alg);
    await sequelize.query('INSERT INTO oidc_keys (kid, alg, private_sealed, created_at, signs_from) VALUES (?, ?, ?, ?, ?)', {
      replacements: [jwk.kid, alg, sealer.seal(JSON.stringify(jwk)), clock(), signsFrom],
    });
    return jwk.kid;
  }

  /** Each key with its state now. */
  function classify(all: KeyRow[]): (KeyRow & { state: KeyInfo['state'] })[] {
    const now = clock().getTime();
    const out: (KeyRow & { state: KeyInfo['state'] })[] = [];
    for (const alg of SIGNING_ALGS) {
      // Newest first: the first that has started signing signs; the one before it (newer) superseded the ones after.
      let signerFrom: number | null = null;
      for (const r of all.filter((k) => k.alg === alg)) {
        const from = new Date(r.signs_from).getTime();
        if (from > now) out.push({ ...r, state: 'pending' });
        else if (signerFrom === null) {
          signerFrom = from;
          out.push({ ...r, state: 'signing' });
        } else out.push({ ...r, state: now - signerFrom < deps.retainSec * 1000 ? 'retiring' : 'expired' });
      }
    }
    return out;
  }

  return {
    /** Makes sure each algorithm has a signing key (init, upgrade, first start); true when one was made. */
    async ensure(): Promise<boolean> {
      const states = classify(await rows());
      let made = false;
      for (const alg of SIGNING_ALGS) {
        if (!states.some((k) => k.alg === alg && k.state === 'signing')) {
          await insert(alg, new Date(clock().getTime() - 1000));
          made = true;
        }
      }
      return made;
    },
    /** A new key per algorithm, published now, signing after `graceSec`. */
    async rotate(graceSec: number): Promise<string[]> {
      const from = new Date(clock().getTime() + graceSec * 1000);
      return [await insert('RS256', from), await insert('ES256', from)];
    },
    async list(): Promise<KeyInfo[]> {
      return classify(await rows()).map((r) => ({
        kid: r.kid,
        alg: r.alg,
        state: r.state,
        created_at: new Date(r.created_at).toISOString(),
        signs_from: new Date(r.signs_from).toISOString(),
      }));
    },
    /** The published keys, signers first; expired keys are deleted on the way. */
    async load(): Promise<KeySet> {
      const states = classify(await rows());
      const expired = states.filter((k) => k.state === 'expired').map((k) => k.kid);
      if (expired.length) await sequelize.query(`DELETE FROM oidc_keys WHERE kid IN (${expired.map(() => '?').join(', ')})`, { replacements: expired });
      const order = { signing: 0, pending: 1, retiring: 2, expired: 3 };
      const published = states.filter((k) => k.state !== 'expired').sort((a, b) => order[a.state] - order[b.state]);
      const keys = published.map((k) => {
        const plain = sealer.open(k.private_sealed);
        if (!plain) throw new Error(`OIDC signing key ${k.kid} cannot be opened with this server's secret`);
        return JSON.parse(plain) as PrivateJwk;
      });
      return { keys, fingerprint: published.map((k) => `${k.kid}:${k.state}`).join(',') };
    },
  };
}

export type KeyStore = ReturnType<typeof createKeyStore>;
