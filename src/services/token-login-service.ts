import { canonicalEmail } from '../data/models/user-columns.js';
import { randomUUID } from 'node:crypto';
import type { SessionRecord } from '../data/repositories/session-repository.js';
import type { UserRecord } from '../data/repositories/user-repository.js';
import { badRequest } from '../errors/app-error.js';
import { chooseLinkBase, withParams } from './account-links.js';
import { invalidToken, isActiveUser, isVerified, markVerified, minutes, type AccountFlowDeps } from './account-flow-deps.js';
import { accountWorkKey } from './deferred-work.js';
import { signInFailed } from './sign-in-audit.js';
import { normalizePhone, type TokenLoginRequest } from './token-login-input.js';
import { CODE_DIGITS } from './token-service.js';

export { normalizePhone, tokenLoginRequestSchema, type TokenLoginRequest, type TokenLoginType } from './token-login-input.js';

/** The route that signs in with a mailed link (GET /auth/token/validate?token=). */
export const TOKEN_VALIDATE_PATH = '/auth/token/validate';

export const MESSAGE_EMAIL_SENT = 'Verification email sent successfully';
export const MESSAGE_CODE_SENT = 'Verification code sent';

const SMS_TEXT: Record<string, (p: string, code: string, m: number) => string> = {
  en: (p, code, m) => `${p} code: ${code}. It expires in ${m} minutes. Do not share it.`,
  es: (p, code, m) => `Código de ${p}: ${code}. Caduca en ${m} minutos. No lo compartas.`,
};
const smsText = (lang: string | null, product: string, code: string, m: number) =>
  (
    SMS_TEXT[
      String(lang ?? '')
        .slice(0, 2)
        .toLowerCase()
    ] ?? SMS_TEXT.en
  )(product, code, m);

export interface TokenLoginProof {
  token?: string;
  tokenId?: string;
  identifier?: string;
  code?: string;
}

export interface TokenLoginResult {
  /** 'pending' when the user has two-factor on: the session can only do the two-factor steps. */
  status: 'active' | 'pending';
  /** Two-factor methods offered (filled by the two-factor module through a hook); [] when active. */
  methods: unknown[];
  user: UserRecord;
  sessionToken: string;
  session: SessionRecord;
  tokenId: string;
}

/**
 * Passwordless sign-in: a link plus a 6-digit code by mail, or a code by SMS. The answer (and its
 * token_id) looks the same whether or not the address has an account; nothing is sent when it has not.
 */
export function createTokenLoginService(deps: AccountFlowDeps) {
  const { config, users, tokens, notify } = deps;

  return {
    async request(input: TokenLoginRequest): Promise<{ message: string; token_id: string }> {
      const { channel, address } = input;
      const message = channel === 'email' ? MESSAGE_EMAIL_SENT : MESSAGE_CODE_SENT;
      const user = channel === 'email' ? await users.findByEmail(address) : await users.findByPhone(address);
      const allowed = await notify.mayMessage(address);
      // The id is chosen now, for every address, so the answer is the same; the token row and the
      // message for a real account come after the answer (see deferred-work.ts).
      const tokenId = randomUUID();
      if (!isActiveUser(user) || !allowed) return { message, token_id: tokenId };
      const base = chooseLinkBase(input.redirectUrl, `${config.publicBaseUrl}${TOKEN_VALIDATE_PATH}`, config);
      deps.deferred.later(
        'sign-in message',
        async () => {
          const t = await tokens.issue({
            id: tokenId,
            kind: 'login',
            userId: user.id,
            identifier: address,
            channel,
            ttlSec: config.loginTokenTtl,
            withCode: true,
          });
          const expiresMinutes = minutes(config.loginTokenTtl);
          if (channel === 'email') {
            await notify.email({
              to: address,
              template: 'login-link',
              lang: user.lang,
              // Non-null: tokens issued for a code sign-in always carry their code.
              data: { name: user.name ?? undefined, link: withParams(base, { token: t.token }), code: t.code!, expiresMinutes },
            });
          } else {
            // Non-null: tokens issued for a code sign-in always carry their code.
            await notify.sms(address, smsText(user.lang, config.productName, t.code!, expiresMinutes));
          }
        },
        accountWorkKey(user.id),
      );
      return { message, token_id: tokenId };
    },

    /** Exchanges a link token, or a code with its token_id or address, for a new active session. */
    async validate(
      proof: TokenLoginProof,
      client: { ip?: string | null; userAgent?: string | null; trustedDevice?: string | null },
    ): Promise<TokenLoginResult> {
      const rec = await consumeProof(proof);
      // Refusals are recorded after the answer (recordLater), named by the address a code was sent with when there is one.
      const refuse = (reason: string, user?: UserRecord | null) => {
        deps.audit.recordLater(signInFailed('token-login', reason, user ? { user } : { identifier: proofIdentifier(proof) }));
        return invalidToken();
      };
      if (!rec?.user_id) throw refuse('invalid_token');
      const user = await users.findById(rec.user_id);
      if (!isActiveUser(user)) {
        const found = user as UserRecord | null;
        throw refuse(!found ? 'unknown_account' : found.deleted_at ? 'deleted' : 'disabled', found);
      }
      // The proof is for the address it went to; if the account's address changed since, it proves nothing.
      const current = rec.channel === 'email' ? canonicalEmail(user.email) : user.phone;
      if (current !== rec.identifier) throw refuse('invalid_token', user);
      // A mailed link or code proved the mailbox: the address is verified, with its event.
      const signedIn = rec.channel === 'email' && !isVerified(user) ? await markVerified(deps, user, 'token_login') : user;
      // A mailed link or code replaces the password, not the second factor: the same sign-in seam as a
      // password login, so two-factor users get a pending session.
      const r = await deps.signIn(signedIn, 'token-login', { ip: client.ip, userAgent: client.userAgent });
      return { status: r.status, user: r.user, sessionToken: r.token, session: r.session, tokenId: rec.id, methods: r.methods };
    },
  };

  /** The address a code was sent with, as lookups compare it; null for a link token or a token_id. */
  function proofIdentifier(p: TokenLoginProof): string | null {
    if (p.token || p.tokenId || !p.identifier) return null;
    return p.identifier.includes('@') ? canonicalEmail(p.identifier) : normalizePhone(p.identifier);
  }

  async function consumeProof(p: TokenLoginProof) {
    if (p.token) return tokens.consume('login', p.token);
    if (p.code === undefined || (!p.tokenId && !p.identifier)) {
      throw badRequest('token, or code with token_id or identifier, is required', [{ field: 'token', message: 'required' }]);
    }
    const code = p.code.replace(/\s+/g, '');
    if (!new RegExp(`^\\d{${CODE_DIGITS}}$`).test(code)) return null;
    if (p.tokenId) return tokens.consumeCode('login', { id: p.tokenId }, code);
    // Non-null: the check above requires a tokenId or an identifier, and a tokenId returned above.
    const id = p.identifier!;
    const address = id.includes('@') ? canonicalEmail(id) : normalizePhone(id);
    return address ? tokens.consumeCode('login', { identifier: address }, code) : null;
  }
}

export type TokenLoginService = ReturnType<typeof createTokenLoginService>;
