import { createHmac, randomUUID } from 'node:crypto';
import type { AuthTokenRecord, AuthTokenRepository } from '../data/repositories/auth-token-repository.js';
import { randomCode, randomToken, safeEqual, sha256 } from './security/tokens.js';

/** The one-time tokens Gatehouse issues; the value is the `kind` column. */
export type TokenKind = 'verify_email' | 'password_reset' | 'login' | 'email_change';

const PREFIX: Record<TokenKind, string> = { verify_email: 'vfy', password_reset: 'rst', login: 'lgn', email_change: 'eml' };

/** Wrong codes a token survives; the next one voids it (a 6-digit code must not be guessable). */
export const MAX_CODE_ATTEMPTS = 5;
export const CODE_DIGITS = 6;

export interface IssueInput {
  /** Chosen by the caller when the id must be answered before the token is stored. */
  id?: string;
  kind: TokenKind;
  userId: string;
  /** The address the token was sent to (normalised email or E.164 phone). */
  identifier: string;
  channel?: 'email' | 'sms';
  ttlSec: number;
  /** Also issue a short numeric code tied to this token. */
  withCode?: boolean;
  /**
   * Which earlier unused tokens of the kind the new one voids: those sent to the same address (default),
   * or the user's own (an email change: another account asking for the same address must not void it).
   */
  supersede?: 'identifier' | 'user';
  /** What the flow needs back when the token is used (never a secret: it is exported with the user's data). */
  meta?: Record<string, unknown> | null;
}

export interface IssuedToken {
  id: string;
  token: string;
  code: string | null;
  expiresAt: Date;
}

export type CodeRef = { id: string } | { identifier: string };

export interface TokenServiceDeps {
  repo: AuthTokenRepository;
  clock?: () => Date;
  /**
   * Server-side key for code hashes. A 6-digit code has only a million values, so a plain hash read
   * from the database could be reversed while the code lives; keyed, it can't without the secret.
   */
  codeKey?: string;
}

/**
 * One-time tokens in auth_tokens: random, stored as SHA-256 hashes, single use, expiring. Issuing a
 * token voids the earlier unused ones of the same kind for the same address, so only the newest works.
 */
export function createTokenService(deps: TokenServiceDeps) {
  const clock = deps.clock ?? (() => new Date());
  // Bound to its row, so equal codes on different rows never share a hash.
  const codeHash = (tokenId: string, code: string) =>
    deps.codeKey ? createHmac('sha256', deps.codeKey).update(`${tokenId}:${code}`).digest('hex') : sha256(`${tokenId}:${code}`);
  const live = (r: AuthTokenRecord | null, kind: TokenKind, now: Date): r is AuthTokenRecord =>
    !!r && r.kind === kind && !r.used_at && r.expires_at.getTime() > now.getTime();

  return {
    async issue(input: IssueInput): Promise<IssuedToken> {
      const now = clock();
      const id = input.id ?? randomUUID();
      const token = randomToken(PREFIX[input.kind]);
      const code = input.withCode ? randomCode(CODE_DIGITS) : null;
      const expiresAt = new Date(now.getTime() + input.ttlSec * 1000);
      await deps.repo.replaceActive(
        input.supersede === 'user' ? { kind: input.kind, userId: input.userId } : { kind: input.kind, identifier: input.identifier },
        {
          id,
          kind: input.kind,
          user_id: input.userId,
          token_hash: sha256(token),
          code_hash: code ? codeHash(id, code) : null,
          channel: input.channel ?? null,
          identifier: input.identifier,
          meta: input.meta ?? null,
          created_at: now,
          expires_at: expiresAt,
        },
      );
      return { id, token, code, expiresAt };
    },

    /** The live token of this kind for a clear token value, without using it up. */
    async peek(kind: TokenKind, token: string): Promise<AuthTokenRecord | null> {
      if (!token || token.length > 200) return null;
      const rec = await deps.repo.findByHash(sha256(token));
      return live(rec, kind, clock()) ? rec : null;
    },

    /** Uses a token up; null when unknown, of another kind, expired, or already used (even concurrently). */
    async consume(kind: TokenKind, token: string): Promise<AuthTokenRecord | null> {
      const rec = await this.peek(kind, token);
      if (!rec) return null;
      return (await deps.repo.markUsed(rec.id, clock())) ? rec : null;
    },

    /**
     * Uses a token up by its short code, found by token id or by the address it was sent to (the
     * newest one). Every try counts; after MAX_CODE_ATTEMPTS wrong codes the token is void.
     */
    async consumeCode(kind: TokenKind, ref: CodeRef, code: string): Promise<AuthTokenRecord | null> {
      const now = clock();
      const rec = 'id' in ref ? await deps.repo.findById(ref.id) : await deps.repo.findLatestActive(kind, ref.identifier, now);
      if (!live(rec, kind, now) || !rec.code_hash) {
        // The same write and hash a real token's wrong code costs, so a guess cannot tell a live
        // token id from an unknown one by the time the answer takes.
        await deps.repo.decoyAttempt();
        safeEqual(codeHash(randomUUID(), String(code)), codeHash(randomUUID(), ''));
        return null;
      }
      if (!(await deps.repo.addAttempt(rec.id, MAX_CODE_ATTEMPTS))) return null;
      if (!safeEqual(codeHash(rec.id, String(code)), rec.code_hash)) {
        if (rec.attempts + 1 >= MAX_CODE_ATTEMPTS) await deps.repo.markUsed(rec.id, now);
        return null;
      }
      return (await deps.repo.markUsed(rec.id, now)) ? rec : null;
    },

    /** Voids every unused token of a kind for a user (e.g. after the password changed). */
    voidForUser: (kind: TokenKind, userId: string) => deps.repo.voidActive({ kind, userId }, clock()),
  };
}

export type TokenService = ReturnType<typeof createTokenService>;
