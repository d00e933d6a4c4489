import type { Config } from '../config/schema.js';
import type { AuthTokenRepository } from '../data/repositories/auth-token-repository.js';
import type { UserRepository } from '../data/repositories/user-repository.js';
import type { RateLimiter } from '../limits/rate-limiter.js';
import type { Logger } from '../log/logger.js';
import { createMailer, type Mailer } from '../mail/mailer.js';
import { createSmsSender, type SmsSender } from '../mail/sms.js';
import type { SignIn } from './sign-in.js';
import type { Hooks } from '../modules/hooks.js';
import { createAccountNotifier } from './account-notify.js';
import { createEmailChangeService, type EmailChangeService } from './email-change-service.js';
import type { DeferredWork } from './deferred-work.js';
import { createPasswordService, type PasswordService } from './password-service.js';
import type { PasswordHasher } from './security/passwords.js';
import type { SessionService } from './session-service.js';
import { createTokenLoginService, type TokenLoginService } from './token-login-service.js';
import { createTokenService, type TokenService } from './token-service.js';
import type { UserService } from './user-service.js';
import type { AccountFlowDeps } from './account-flow-deps.js';
import { createVerificationService, type VerificationService } from './verification-service.js';

/** The services of the mail and SMS account flows, as they appear on app.services. */
export interface AccountFlows {
  mailer: Mailer;
  sms: SmsSender;
  tokens: TokenService;
  verification: VerificationService;
  passwordFlows: PasswordService;
  /** Self-service email change: a password-checked request, a link to the new address (docs/email-change.md). */
  emailChange: EmailChangeService;
  tokenLogin: TokenLoginService;
  /** Mail and token work scheduled after answers; shutdown waits for it. */
  deferred: DeferredWork;
}

export interface AccountFlowsInput {
  config: Config;
  logger: Logger;
  authTokens: AuthTokenRepository;
  users: UserRepository;
  userService: Pick<UserService, 'setPassword' | 'patch'>;
  sessions: SessionService;
  passwords: PasswordHasher;
  hooks: Hooks;
  signIn: SignIn;
  limiter: RateLimiter;
  /** Work after the answer; built by the composition root, which the audit service shares. */
  deferred: DeferredWork;
  audit: AccountFlowDeps['audit'];
  transaction: AccountFlowDeps['transaction'];
  clock?: () => Date;
}

/**
 * Builds the mailer, the SMS sender and the flows that use them, and subscribes the verification
 * mail to 'auth.registered'. The caller closes `mailer` on shutdown.
 */
export function createAccountFlows(input: AccountFlowsInput): AccountFlows {
  const { config, logger, clock } = input;
  const mailer = createMailer(config, logger);
  const sms = createSmsSender(config, logger);
  const tokens = createTokenService({
    repo: input.authTokens,
    clock,
    codeKey: config.cookieSecret ?? config.bridgeSecret,
  });
  const notify = createAccountNotifier({ mailer, sms, limiter: input.limiter, config, logger });
  const { deferred } = input;
  const deps = { ...input, tokens, notify };
  const verification = createVerificationService(deps);
  verification.attach(input.hooks);
  return {
    mailer,
    sms,
    tokens,
    verification,
    passwordFlows: createPasswordService(deps),
    emailChange: createEmailChangeService(deps),
    tokenLogin: createTokenLoginService(deps),
    deferred,
  };
}
