import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

/**
 * A software authenticator for the API tests: ES256 credentials and assertions made with node:crypto,
 * CBOR encoded with @simplewebauthn/server's own helpers (no encoder of ours). It answers what a
 * browser's navigator.credentials would hand the client, as the JSON shapes @simplewebauthn/browser sends.
 */
const b64u = (b: Uint8Array | Buffer) => Buffer.from(b).toString('base64url');
const sha256 = (b: Uint8Array | string) => createHash('sha256').update(b).digest();
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};

const UP = 0x01;
const UV = 0x04;
const AT = 0x40;

export interface SoftCredential {
  id: string;
  rawId: Buffer;
  privateKey: KeyObject;
  userHandle: string | null;
  rpId: string;
  counter: number;
}

export interface Ceremony {
  origin: string;
  /** Overrides what is signed (a wrong RP ID, another challenge, a tampered signature). */
  rpId?: string;
  challenge?: string;
  counter?: number;
  uv?: boolean;
  badSignature?: boolean;
  /** The authenticator's AAGUID at registration (default: all zeros, as attestation `none` often gives). */
  aaguid?: string;
}

function clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string, origin: string) {
  return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
}

/** `navigator.credentials.create` for options from POST /auth/passkeys/register/options. */
export function createCredential(options: { challenge: string; rp: { id?: string }; user: { id: string } }, c: Ceremony) {
  const rpId = c.rpId ?? options.rp.id ?? 'localhost';
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  // COSE_Key: kty EC2 (1: 2), alg ES256 (3: -7), crv P-256 (-1: 1), x (-2), y (-3).
  const cose = isoCBOR.encode(
    new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(jwk.x!, 'base64url')],
      [-3, Buffer.from(jwk.y!, 'base64url')],
    ]),
  );
  const rawId = randomBytes(32);
  const idLen = Buffer.alloc(2);
  idLen.writeUInt16BE(rawId.length);
  const authData = Buffer.concat([
    sha256(rpId),
    Buffer.from([UP | AT | (c.uv === false ? 0 : UV)]),
    u32(c.counter ?? 0),
    c.aaguid ? Buffer.from(c.aaguid.replace(/-/g, ''), 'hex') : Buffer.alloc(16),
    idLen,
    rawId,
    cose,
  ]);
  const attestationObject = isoCBOR.encode(
    new Map<string, string | Uint8Array | Map<string, string>>([
      ['fmt', 'none'],
      ['attStmt', new Map<string, string>()],
      ['authData', authData],
    ]),
  );
  const cdj = clientData('webauthn.create', c.challenge ?? options.challenge, c.origin);
  const credential: SoftCredential = { id: b64u(rawId), rawId, privateKey, userHandle: options.user.id, rpId, counter: c.counter ?? 0 };
  const response = {
    id: credential.id,
    rawId: credential.id,
    type: 'public-key',
    response: { clientDataJSON: b64u(cdj), attestationObject: b64u(attestationObject), transports: ['internal'] },
    clientExtensionResults: {},
    authenticatorAttachment: 'platform',
  };
  return { credential, response };
}

/** `navigator.credentials.get` with a discoverable credential, for options from POST /auth/passkeys/login/options. */
export function assert(credential: SoftCredential, options: { challenge: string }, c: Ceremony) {
  const counter = c.counter ?? credential.counter + 1;
  credential.counter = counter;
  const authData = Buffer.concat([sha256(c.rpId ?? credential.rpId), Buffer.from([UP | (c.uv === false ? 0 : UV)]), u32(counter)]);
  const cdj = clientData('webauthn.get', c.challenge ?? options.challenge, c.origin);
  let signature = sign('sha256', Buffer.concat([authData, sha256(cdj)]), credential.privateKey);
  if (c.badSignature) signature = sign('sha256', Buffer.from('something else'), credential.privateKey);
  return {
    id: credential.id,
    rawId: credential.id,
    type: 'public-key',
    response: { clientDataJSON: b64u(cdj), authenticatorData: b64u(authData), signature: b64u(signature), userHandle: credential.userHandle },
    clientExtensionResults: {},
    authenticatorAttachment: 'platform',
  };
}
