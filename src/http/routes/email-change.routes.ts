import type { Request, Response } from 'express';
import type { AppContext } from '../../app-context.js';
import { invalidToken } from '../../services/account-flow-deps.js';
import { EMAIL_CHANGE_REQUESTED } from '../../services/email-change-service.js';
import { defineRoute } from '../define-route.js';
import { consumeClassOrThrow } from '../middleware/rate-limit.js';
import { giveBackClass } from '../middleware/rate-limit-request.js';
import { perSession } from '../middleware/rate-limit-classes.js';
import { emailChangeBody, emailChangeConfirmBody, emailChangeConfirmQuery, type EmailChangeBody } from '../schemas/email-change.schemas.js';

const CHANGED = 'Email address changed';

/** The request's input under whichever names the client used. */
export const emailChangeInput = (body: EmailChangeBody) => ({
  newEmail: body.new_email ?? body.newEmail,
  password: body.password ?? body.current_password ?? body.currentPassword,
});

/**
 * The password check counts in `login`, where POST /auth/password-change/self counts (per address):
 * this route is no second way to guess a password with a stolen session. A request that went through
 * (the password was right) gives that hit back (`loginPassed`), as a sign-in does.
 */
export const loginAttempt = (app: AppContext, req: Request, res: Response) => () => consumeClassOrThrow(app, req, res, 'login');

/** After a request whose password check in `login` passed: its hit there goes back. */
export const loginPassed = (app: AppContext, req: Request) => giveBackClass(app, req, 'login');

/**
 * Asks for a new address (docs/email-change.md). A full session (a pending two-factor one is 401) and
 * the current password; the answer is the same whether or not the address is free.
 */
export const requestEmailChange = defineRoute({
  method: 'post',
  path: '/auth/user/me/email',
  summary: 'Ask to change your email address (password required)',
  auth: 'session',
  rateLimit: perSession('email-change'),
  body: emailChangeBody,
  async handler({ app, req, res, body, auth }) {
    const { expiresIn } = await app.services.emailChange.request({ user: auth.user, sessionId: auth.session.id }, emailChangeInput(body), {
      beforePasswordCheck: loginAttempt(app, req, res),
    });
    await loginPassed(app, req);
    return { success: true, message: EMAIL_CHANGE_REQUESTED, expires_in: expiresIn };
  },
});

async function confirm(app: AppContext, token: string | undefined) {
  if (!token) throw invalidToken();
  const { user } = await app.services.emailChange.confirm(token);
  return { success: true, message: CHANGED, email: user.email };
}

/** Uses the mailed link's token: the link proves the new mailbox, the request proved the password. */
export const confirmEmailChange = defineRoute({
  method: 'post',
  path: '/auth/user/me/email/confirm',
  summary: 'Confirm a new email address with the mailed token',
  auth: 'public',
  rateLimit: 'token-validate',
  body: emailChangeConfirmBody,
  handler: ({ app, body }) => confirm(app, body.token),
});

/** The link itself when WEB_PAGES is off, as GET /auth/token/verify is for verification. */
export const confirmEmailChangeLink = defineRoute({
  method: 'get',
  path: '/auth/user/me/email/confirm',
  summary: 'Confirm a new email address from the mailed link',
  auth: 'public',
  rateLimit: 'token-validate',
  query: emailChangeConfirmQuery,
  handler: ({ app, query }) => confirm(app, query.token),
});
