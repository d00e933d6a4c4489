import { AppError, type ModuleErrorCode } from '../../src/module-api.js';

/** The codes the module answers with (listed in /openapi.json under its tag as `x-error-codes`). */
export const errorCodes: ModuleErrorCode[] = [
  {
    code: 'PASSKEY_INVALID',
    status: 400,
    description:
      'The passkey response was refused: a replayed, expired or foreign challenge (another purpose, user or pending session), a wrong origin or RP ID, a bad signature, an unknown credential or account, a counter that did not move forward. Nothing was created, removed or signed in.',
  },
  {
    code: 'PASSKEY_ACCOUNT_MISMATCH',
    status: 400,
    description:
      'The sign-in was started for an email (login options with `{email}`) and the passkey answering it belongs to another account: nobody was signed in. Start again without the email, or choose that account’s passkey.',
  },
  { code: 'PASSKEY_NOT_FOUND', status: 404, description: 'No such passkey of the signed-in user.' },
  {
    code: 'RECENT_SIGN_IN_REQUIRED',
    status: 403,
    description:
      'Removing a passkey needs a session signed in within the last 10 minutes, or an assertion of that passkey (its remove options): sign in again or prove it.',
  },
  { code: 'LAST_SIGN_IN_METHOD', status: 409, description: 'This passkey is the last way into the account (no password, no social link, no other passkey).' },
];

/** One answer for every refusal, so a client learns nothing about which check failed. */
export const passkeyInvalid = () => new AppError(400, 'PASSKEY_INVALID', 'The passkey could not be verified');

/** A sign-in started for one account's email answered with another account's passkey: nobody is signed in. */
export const passkeyAccountMismatch = () =>
  new AppError(400, 'PASSKEY_ACCOUNT_MISMATCH', 'This passkey belongs to another account than the one the sign-in was started for');
