import { randomBytes, randomUUID } from 'node:crypto';
import type { AuthTokenRepository } from '../data/repositories/auth-token-repository.js';
import { safeEqual, sha256 } from '../services/security/tokens.js';
import type { Sealer } from './crypto.js';
import { invalidState } from './errors.js';
import type { ProviderId } from './settings.js';

/** How long a started sign-in may take at the provider. */
export const FLOW_TTL_SEC = 600;
const KIND = 'social_state';

export interface FlowStart {
  provider: ProviderId;
  returnTo: string | null;
  format: 'json' | null;
  /** Set for an explicit link by a signed-in user. */
  linkUserId: string | null;
}

export interface Flow extends FlowStart {
  verifier: string;
  nonce: string;
}

export interface StartedFlow {
  state: string;
  verifier: string;
  nonce: string;
  /** Goes into the browser's flow cookie; the callback must bring it back. */
  binding: string;
}

const rand = () => randomBytes(32).toString('base64url');

/**
 * Started sign-ins, server-side in auth_tokens (kind social_state): found by the SHA-256 of `state`,
 * single use (marked used before anything else is checked), expiring after 10 minutes, and bound to
 * the browser that started them by a random value kept in a cookie, stored here as a hash. The PKCE
 * verifier and nonce are sealed at rest.
 */
export function createFlowStore(repo: AuthTokenRepository, sealer: Sealer, clock: () => Date) {
  return {
    async start(f: FlowStart): Promise<StartedFlow> {
      const state = rand();
      const verifier = rand();
      const nonce = rand();
      const binding = rand();
      const now = clock();
      await repo.create({
        id: randomUUID(),
        kind: KIND,
        user_id: f.linkUserId,
        token_hash: sha256(state),
        code_hash: sha256(binding),
        channel: null,
        identifier: f.provider,
        meta: { return_to: f.returnTo, format: f.format, secrets: sealer.seal(JSON.stringify({ verifier, nonce })) },
        created_at: now,
        expires_at: new Date(now.getTime() + FLOW_TTL_SEC * 1000),
      });
      return { state, verifier, nonce, binding };
    },

    /**
     * The flow a callback belongs to, used up. Throws 400 SOCIAL_INVALID_STATE for a missing, unknown,
     * replayed or expired state, one of another provider, or one this browser did not start.
     * `peek` gives what is known of the flow (its return URL and format) even when it is refused.
     */
    async consume(provider: ProviderId, state: unknown, binding: unknown, peek?: (f: Pick<FlowStart, 'returnTo' | 'format'>) => void): Promise<Flow> {
      if (typeof state !== 'string' || state.length < 20 || state.length > 200) throw invalidState();
      const rec = await repo.findByHash(sha256(state));
      if (!rec || rec.kind !== KIND) throw invalidState();
      const meta = (rec.meta ?? {}) as { return_to?: string | null; format?: 'json' | null; secrets?: string };
      const won = await repo.markUsed(rec.id, clock());
      if (!won || rec.used_at || rec.expires_at.getTime() <= clock().getTime() || rec.identifier !== provider) throw invalidState();
      // The browser check comes after the flow's own checks, and the flow's return URL is only told
      // to a browser that proved it started it.
      if (typeof binding !== 'string' || !safeEqual(sha256(binding), rec.code_hash)) throw invalidState();
      peek?.({ returnTo: meta.return_to ?? null, format: meta.format ?? null });
      const secrets = sealer.open(meta.secrets);
      if (!secrets) throw invalidState();
      const { verifier, nonce } = JSON.parse(secrets) as { verifier: string; nonce: string };
      return { provider, returnTo: meta.return_to ?? null, format: meta.format ?? null, linkUserId: rec.user_id, verifier, nonce };
    },
  };
}

export type FlowStore = ReturnType<typeof createFlowStore>;
