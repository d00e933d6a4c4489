import { randomUUID } from 'node:crypto';
import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import { isUniqueViolation, type ModuleContext, type UserRecord } from '../../src/module-api.js';
import { challengeOf, claimChallenge, keepChallenge } from './challenges.js';
import { passkeyInvalid } from './errors.js';
import { defaultName } from './names.js';
import { relyingParty } from './settings.js';
import { row, store, view } from './store.js';
import { webauthn } from './webauthn.js';

/** ES256, EdDSA, RS256 (COSE algorithm ids), as the issue asks. */
const ALGORITHMS = [-7, -8, -257];

/** Options for adding a passkey: discoverable, user verification preferred, no attestation, the user's passkeys excluded. */
export async function registrationOptions(ctx: ModuleContext, user: UserRecord) {
  const rp = relyingParty(ctx);
  const existing = (await store(ctx).Credential.findAll({ where: { user_id: user.id } })).map(row);
  const { generateRegistrationOptions } = await webauthn();
  const options = await generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: user.email,
    userDisplayName: [user.name, user.last_name].filter(Boolean).join(' ') || user.email,
    // The user handle a discoverable credential gives back at sign-in: the user's id, nothing personal.
    userID: new TextEncoder().encode(user.id),
    attestationType: 'none',
    excludeCredentials: existing.map((c) => ({ id: c.credential_id, transports: transportsOf(c.transports) })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
    supportedAlgorithmIDs: ALGORITHMS,
  });
  await keepChallenge(ctx, options.challenge, 'register', user.id);
  return options;
}

const transportsOf = (s: string | null) => (s ? s.split(',') : undefined);

/** Verifies a new passkey and stores it with its `passkeys.added` event; any refusal is PASSKEY_INVALID with nothing stored. */
export async function registerPasskey(
  ctx: ModuleContext,
  user: UserRecord,
  credential: RegistrationResponseJSON,
  name: string | undefined,
  userAgent?: string | null,
) {
  const challenge = await challengeOf(credential?.response?.clientDataJSON);
  if (!challenge || !(await claimChallenge(ctx, challenge, 'register', user.id))) return refuse(ctx, user.id, 'challenge');
  const rp = relyingParty(ctx);
  const { verifyRegistrationResponse } = await webauthn();
  let v;
  try {
    v = await verifyRegistrationResponse({
      response: credential,
      expectedChallenge: challenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      requireUserVerification: false,
      supportedAlgorithmIDs: ALGORITHMS,
    });
  } catch (err) {
    ctx.logger.info({ user: user.id, reason: (err as Error).message }, 'passkey registration refused');
    return refuse(ctx, user.id, 'verification');
  }
  const info = v.verified ? v.registrationInfo : undefined;
  if (!info) return refuse(ctx, user.id, 'verification');
  const now = new Date();
  const values: Record<string, unknown> & { id: string; name: string; aaguid: string | null; device_type: string } = {
    id: randomUUID(),
    user_id: user.id,
    credential_id: info.credential.id,
    public_key: Buffer.from(info.credential.publicKey).toString('base64url'),
    counter: info.credential.counter,
    transports: (credential.response.transports ?? []).join(',').slice(0, 200) || null,
    device_type: info.credentialDeviceType,
    backed_up: info.credentialBackedUp,
    aaguid: info.aaguid && info.aaguid !== '00000000-0000-0000-0000-000000000000' ? info.aaguid : null,
    name: '',
    created_at: now,
    last_used_at: null,
  };
  // Called after its authenticator (AAGUID) or the browser adding it, unless the user named it.
  values.name = name || defaultName(values.aaguid, userAgent);
  try {
    const created = await ctx.db.transaction(async (tx) => {
      const r = await store(ctx).Credential.create(values, { transaction: tx });
      await ctx.audit.record(
        { type: 'passkeys.added', userId: user.id, details: { passkey_id: values.id, name: values.name, device_type: values.device_type } },
        { tx },
      );
      return r;
    });
    return view(row(created));
  } catch (err) {
    // The same authenticator's credential registered already (by this or another account).
    if (isUniqueViolation(err)) return refuse(ctx, user.id, 'duplicate');
    throw err;
  }
}

function refuse(ctx: ModuleContext, userId: string, reason: string): never {
  ctx.audit.recordLater({ type: 'passkeys.registration_refused', outcome: 'failure', userId, details: { reason } });
  throw passkeyInvalid();
}
