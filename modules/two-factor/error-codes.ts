import type { ModuleErrorCode } from '../../src/module-api.js';

/** The codes the module answers with (listed in /openapi.json under its tag as `x-error-codes`). */
export const errorCodes: ModuleErrorCode[] = [
  {
    code: 'METHOD_NOT_AVAILABLE',
    status: 400,
    description: 'The method is not among the methods this server offers (the `methods` setting), or the module providing it (a passkey) is not answering now.',
  },
  { code: 'ALREADY_SET_UP', status: 400, description: 'Backup codes, an authenticator app or this address or number is set up already.' },
  { code: 'METHOD_NOT_FOUND', status: 404, description: "No such method of the user's, or none of that kind in the state asked for." },
  { code: 'METHOD_NOT_ACTIVE', status: 400, description: 'The method is not set up yet: verify it with action "setup" first.' },
  { code: 'METHOD_NOT_PENDING', status: 400, description: 'The method is set up already: there is nothing to confirm.' },
  { code: 'NO_VERIFIED_METHOD', status: 400, description: 'Two-factor cannot be turned on without a verified email, SMS or authenticator method.' },
  { code: 'LAST_METHOD', status: 400, description: 'The last method that stands alone cannot be removed while two-factor is on.' },
  { code: 'VERIFICATION_REQUIRED', status: 400, description: 'The change needs a current code: send verification_code and verification_method_id.' },
  {
    code: 'INVALID_CODE',
    status: 400,
    description:
      'The code is wrong (or, with reason already_used, an authenticator code that was used already); attempts_remaining says how many tries are left.',
  },
  { code: 'CODE_EXPIRED', status: 400, description: 'No live code was sent for this method and purpose: request a new one.' },
  { code: 'ALREADY_VERIFIED', status: 400, description: 'The session is signed in already: there is no second step to finish.' },
  { code: 'TWO_FACTOR_REQUIRED', status: 403, description: 'A pending session may only finish signing in.' },
  { code: 'RATE_LIMITED', status: 429, description: 'Too many codes sent to one method, or too many wrong codes of one user; retry_after says when.' },
  {
    code: 'SERVICE_UNAVAILABLE',
    status: 503,
    description: 'A stored authenticator secret cannot be read (was the server secret changed?): use another method.',
  },
  { code: 'TWO_FACTOR_IN_USE', status: 409, description: 'Uninstalling the module while users have two-factor on needs force.' },
];
