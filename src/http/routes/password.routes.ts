import type { AppContext } from '../../app-context.js';
import { badRequest } from '../../errors/app-error.js';
import { invalidToken } from '../../services/account-flow-deps.js';
import { defineRoute } from '../define-route.js';
import { beforeCredentials } from '../middleware/credential-limits.js';
import { giveBackClass } from '../middleware/rate-limit-request.js';
import {
  changeOwnPasswordBody,
  changePasswordByAdminBody,
  resetCompleteBody,
  resetRequestBody,
  resetTokenInput,
  type ResetCompleteBody,
} from '../schemas/password.schemas.js';

export const RESET_REQUEST_MESSAGE = 'If the address is registered, a password reset email has been sent.';
const RESET_DONE_MESSAGE = 'Password has been reset successfully';
const PASSWORD_UPDATED = 'Password updated successfully';

/** The password under whichever name the client uses; 400 when none is given. */
function pickPassword(body: Record<string, string | undefined>, names: string[]): { value: string; field: string } {
  for (const field of names) {
    const value = body[field];
    if (value !== undefined) return { value, field };
  }
  throw badRequest(`${names[0]} is required`, [{ field: names[0], message: 'required' }]);
}

const validAnswer = { success: true, valid: true, message: 'Token is valid' };

async function checkResetToken(app: AppContext, token: string) {
  if (!(await app.services.passwordFlows.isResetTokenValid(token))) {
    throw invalidToken({ valid: false, message: 'Invalid or expired token' });
  }
  return validAnswer;
}

/** Always the same answer; the link base is the client's resetUrl only when allow-listed. */
export const requestReset = defineRoute({
  method: 'post',
  path: '/auth/password-reset/request',
  summary: 'Mail a password reset link',
  auth: 'public',
  rateLimit: 'token-login',
  body: resetRequestBody,
  async handler({ app, body }) {
    await app.services.passwordFlows.requestReset(body.email, body.resetUrl ?? body.reset_url);
    return { success: true, message: RESET_REQUEST_MESSAGE };
  },
});

export const validateReset = defineRoute({
  method: 'post',
  path: '/auth/password-reset/validate',
  summary: 'Check that a password reset token is valid',
  auth: 'public',
  rateLimit: 'token-validate',
  body: resetTokenInput,
  handler: ({ app, body }) => checkResetToken(app, body.token),
});

/** Legacy form used by @pubflow/core 0.5: the token in the path. */
export const validateResetLegacy = defineRoute({
  method: 'get',
  path: '/auth/password-reset/validate/:token',
  summary: 'Check a password reset token (legacy form, token in the path)',
  auth: 'public',
  rateLimit: 'token-validate',
  params: resetTokenInput,
  handler: ({ app, params }) => checkResetToken(app, params.token),
});

const completeHandler = async ({ app, body }: { app: AppContext; body: ResetCompleteBody }) => {
  const { value, field } = pickPassword(body, ['password', 'new_password', 'newPassword']);
  await app.services.passwordFlows.completeReset(body.token, value, field);
  return { success: true, message: RESET_DONE_MESSAGE };
};

export const completeReset = defineRoute({
  method: 'post',
  path: '/auth/password-reset/complete',
  summary: 'Set a new password with a reset token',
  auth: 'public',
  rateLimit: 'token-validate',
  body: resetCompleteBody,
  handler: completeHandler,
});

/** Legacy name of /complete. */
export const completeResetLegacy = defineRoute({
  method: 'post',
  path: '/auth/password-reset/reset',
  summary: 'Set a new password with a reset token (legacy name of /complete)',
  auth: 'public',
  rateLimit: 'token-validate',
  body: resetCompleteBody,
  handler: completeHandler,
});

/**
 * Own password; the login class, since a stolen session could otherwise guess the current password. A
 * change that went through (so the current password was right) gives that hit back, as a sign-in does.
 */
export const changeOwnPassword = defineRoute({
  method: 'post',
  path: '/auth/password-change/self',
  summary: 'Change your own password (current password required)',
  auth: 'session',
  rateLimit: 'login',
  body: changeOwnPasswordBody,
  async handler({ app, req, body, auth }) {
    // A missing field tested no password: it does not spend the login budget.
    const current = beforeCredentials(() => pickPassword(body, ['current_password', 'currentPassword']));
    const next = beforeCredentials(() => pickPassword(body, ['new_password', 'newPassword']));
    await app.services.passwordFlows.changeOwn({ user: auth.user, sessionId: auth.session.id }, current.value, next.value);
    await giveBackClass(app, req, 'login');
    return { success: true, message: PASSWORD_UPDATED };
  },
});

export const changePasswordByAdmin = defineRoute({
  method: 'post',
  path: '/auth/password-change/admin',
  summary: "Set another user's password (admin)",
  auth: { roles: ['admin', 'superadmin'] },
  rateLimit: 'admin',
  body: changePasswordByAdminBody,
  async handler({ app, body, auth }) {
    const userId = body.user_id ?? body.userId;
    if (!userId) throw badRequest('user_id is required', [{ field: 'user_id', message: 'required' }]);
    const next = pickPassword(body, ['new_password', 'newPassword', 'password']);
    await app.services.passwordFlows.changeByAdmin({ user: auth.user, sessionId: auth.session.id }, userId, next.value);
    return { success: true, message: PASSWORD_UPDATED };
  },
});
