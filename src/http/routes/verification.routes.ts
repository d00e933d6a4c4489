import { invalidToken } from '../../services/account-flow-deps.js';
import { withParams } from '../../services/account-links.js';
import { defineRoute } from '../define-route.js';
import { resendVerificationBody, verifyEmailQuery } from '../schemas/verification.schemas.js';

export const RESEND_MESSAGE = 'If the address is registered and unverified, a verification email has been sent.';

/**
 * The link in the verification mail. With VERIFY_REDIRECT_URL the browser lands on the front end with
 * ?verified=1 (or ?verified=0&error=invalid_token); without it, a JSON answer.
 */
export const verifyEmailLink = defineRoute({
  method: 'get',
  path: '/auth/token/verify',
  summary: 'Verify an email address from the mailed link',
  auth: 'public',
  rateLimit: 'token-validate',
  query: verifyEmailQuery,
  async handler({ app, query, res }) {
    const user = query.token ? await app.services.verification.verify(query.token) : null;
    const target = app.config.verifyRedirectUrl;
    if (target) {
      // Never echo the token into the redirect: the front end only needs the outcome.
      res.redirect(302, withParams(target, user ? { verified: '1' } : { verified: '0', error: 'invalid_token' }));
      return;
    }
    if (!user) throw invalidToken();
    return { success: true, message: 'Email verified' };
  },
});

/** Same answer whatever the address: registered or not, verified or not. */
export const resendVerification = defineRoute({
  method: 'post',
  path: '/auth/resend-verification',
  summary: 'Send the email verification link again',
  auth: 'public',
  rateLimit: 'token-login',
  body: resendVerificationBody,
  async handler({ app, body }) {
    await app.services.verification.resend(body.email);
    return { success: true, message: RESEND_MESSAGE };
  },
});
