import type { AppError } from '../../errors/app-error.js';

/**
 * What a page shows for a refused form: the error's message, and its first field's detail when that adds
 * something ("Password is too common; choose another", not "…: too common" after it).
 */
export function errorText(err: AppError, withField = false): string {
  const detail = err.details?.[0];
  if (!detail?.message || err.message.toLowerCase().includes(detail.message.toLowerCase())) return err.message;
  return withField && detail.field ? `${err.message} (${detail.field}: ${detail.message})` : `${err.message}: ${detail.message}`;
}
