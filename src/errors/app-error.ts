import { Codes, type Code } from './codes.js';

/**
 * One entry of an error's `details`: always an array of these on the wire, whatever the error (a
 * validation failure lists every bad field; other refusals name the one field they are about). `field`
 * is a dotted path, or null for the input as a whole.
 */
export interface FieldIssue {
  field: string | null;
  message: string;
  /** The entry's own wire code, where the entries of one error differ (a module plan's problems). */
  code?: string;
}

/** The one error family. `message` is the human text sent as `error` on the wire. */
export class AppError extends Error {
  constructor(
    public readonly status: number,
    public readonly code: Code,
    message: string,
    public readonly details?: readonly FieldIssue[],
    /** Extra top-level fields for the wire body (e.g. attempts_remaining). */
    public readonly extra?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const badRequest = (message: string, details?: readonly FieldIssue[], code: Code = Codes.VALIDATION_ERROR) => new AppError(400, code, message, details);
export const unauthorized = (message = 'Authentication required', code: Code = Codes.UNAUTHORIZED) => new AppError(401, code, message);
export const forbidden = (message = 'Insufficient permissions', code: Code = Codes.FORBIDDEN) => new AppError(403, code, message);
export const notFound = (message = 'Not found', code: Code = Codes.NOT_FOUND) => new AppError(404, code, message);
export const conflict = (message: string, code: Code = Codes.CONFLICT) => new AppError(409, code, message);
/** A 503; `retryAfterSec` goes on the wire as `retry_after` and in `Retry-After` (else a default, retry-after.ts). */
export const unavailable = (message: string, code: Code = Codes.SERVICE_UNAVAILABLE, retryAfterSec?: number) =>
  new AppError(503, code, message, undefined, retryAfterSec === undefined ? undefined : { retry_after: retryAfterSec });

/** The one answer to a request that a dependency's outage keeps from being served, whichever part writes it. */
export const OUTAGE_MESSAGE = 'Service temporarily unavailable';
export const OUTAGE_BODY = Object.freeze({ success: false, error: OUTAGE_MESSAGE, code: Codes.SERVICE_UNAVAILABLE });

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;
