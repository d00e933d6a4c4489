import { AppError } from '../errors/app-error.js';

/** Error codes of social login (UPPER_SNAKE, as every code on the wire). */
export const SocialCodes = {
  DISABLED: 'SOCIAL_LOGIN_DISABLED',
  PROVIDER_NOT_CONFIGURED: 'SOCIAL_PROVIDER_NOT_CONFIGURED',
  INVALID_STATE: 'SOCIAL_INVALID_STATE',
  INVALID_RETURN_URL: 'SOCIAL_INVALID_RETURN_URL',
  AUTHORIZATION_DENIED: 'SOCIAL_AUTHORIZATION_DENIED',
  INVALID_CODE: 'SOCIAL_INVALID_CODE',
  INVALID_TOKEN: 'SOCIAL_INVALID_TOKEN',
  TOKEN_NOT_FOR_APP: 'SOCIAL_TOKEN_NOT_FOR_APP',
  NO_EMAIL: 'SOCIAL_EMAIL_MISSING',
  EMAIL_NOT_VERIFIED: 'SOCIAL_EMAIL_NOT_VERIFIED',
  LINK_REQUIRED: 'SOCIAL_ACCOUNT_LINK_REQUIRED',
  ALREADY_LINKED: 'SOCIAL_ACCOUNT_ALREADY_LINKED',
  ACCOUNT_NOT_LINKED: 'SOCIAL_ACCOUNT_NOT_LINKED',
  LAST_SIGN_IN_METHOD: 'SOCIAL_LAST_SIGN_IN_METHOD',
  ACCOUNT_DISABLED: 'SOCIAL_ACCOUNT_DISABLED',
  REGISTRATION_DISABLED: 'REGISTRATION_DISABLED',
  PROVIDER_UNAVAILABLE: 'SOCIAL_PROVIDER_UNAVAILABLE',
} as const;

export const socialError = (status: number, code: string, message: string) => new AppError(status, code, message);

export const invalidState = () => socialError(400, SocialCodes.INVALID_STATE, 'Invalid or expired social login state; start the sign-in again');
export const invalidToken = (why = 'Invalid provider token') => socialError(401, SocialCodes.INVALID_TOKEN, why);
export const providerUnavailable = (provider: string) =>
  socialError(503, SocialCodes.PROVIDER_UNAVAILABLE, `The ${provider} sign-in service did not answer; try again shortly`);
