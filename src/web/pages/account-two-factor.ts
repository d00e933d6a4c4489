import type { Request, Response } from 'express';
import { isAppError, notFound } from '../../errors/app-error.js';
import type { AnyModuleRouteDef } from '../../modules/module-route.js';
import type { ServedModuleRoute } from '../module-routes.js';
import type { PageSession } from '../page-auth.js';

/**
 * The account page's two-step verification section (/account#second-step) and its posts: the
 * two-factor provider's API routes, found by method and path (never by module name) and called in
 * process by account.ts's `callRoute`. An authenticator app's setup left unconfirmed is shown again
 * on every visit (its key and QR code from `GET /auth/two_factor/:method/setup`) until it is confirmed
 * or cancelled.
 */

/** The provider's API the section uses. */
export const TWO_FACTOR_API = {
  tfSystem: ['get', '/auth/two_factor/system'],
  tfMethods: ['get', '/auth/two_factor/methods'],
  tfSetup: ['post', '/auth/two_factor/:method/setup'],
  tfPending: ['get', '/auth/two_factor/:method/setup'],
  tfVerify: ['post', '/auth/two_factor/verify'],
  tfRemove: ['delete', '/auth/two_factor/:id'],
  tfBackup: ['post', '/auth/two_factor/backup_codes/regenerate'],
  tfDevices: ['get', '/auth/two_factor/trusted_devices'],
  tfForget: ['post', '/auth/two_factor/trusted_devices/forget'],
} as const satisfies Record<string, [AnyModuleRouteDef['method'], string]>;
type TfName = keyof typeof TWO_FACTOR_API;

interface TwoFactorMethod {
  id: string;
  method: string;
  status?: string;
  identifier?: string | null;
}

/** What a post shows with a rendered (not redirected) answer. */
export type Shown = {
  error?: string;
  status?: number;
  /** An authenticator app being set up; `resumed` when it was started on an earlier visit. */
  totp?: { method_id: string; qr: string; secret: string; resumed?: boolean };
  sent?: { method_id: string; kind: string; identifier: string };
  codes?: string[];
  /** An outcome shown with a rendered (not redirected) answer, as `?done=` names one. */
  outcome?: string;
};

type Handler = (req: Request, res: Response) => Promise<void>;

/** What the section gets from account.ts: its route lookups and calls, its post wrapper, its form reader. */
export interface AccountKit {
  route(name: TfName): ServedModuleRoute | null;
  callRoute(
    req: Request,
    res: Response,
    s: PageSession,
    name: TfName,
    input?: { params?: Record<string, string>; body?: unknown },
  ): Promise<Record<string, unknown>>;
  read<T>(req: Request, res: Response, s: PageSession, name: TfName, pick: (r: Record<string, unknown>) => T): Promise<T | null>;
  action(fn: (req: Request, res: Response, s: PageSession) => Promise<string | Shown | void>, anchor: string): Handler;
  field(req: Request, name: string, max?: number): string;
}

export function twoFactorSection(kit: AccountKit) {
  const { route, callRoute, read, action, field } = kit;

  /**
   * The section's data (null when no provider is on) and the authenticator setup to show again: the
   * user's pending one, unless the page shows another panel already.
   */
  async function state(req: Request, res: Response, s: PageSession, shown: Shown) {
    const all = await read(req, res, s, 'tfMethods', (r) => ({ enabled: Boolean(r.two_factor_enabled), methods: r.methods as TwoFactorMethod[] }));
    if (!all) return { twoFactor: null, totp: undefined };
    // Passkeys have their own section (they are listed as a second-step method too once the user has one).
    const methods = all.methods.filter((m) => m.status !== 'pending_setup' && m.method !== 'passkey');
    const offered = (await read(req, res, s, 'tfSystem', (r) => (r.available_methods as string[]) ?? [])) ?? [];
    const devices = route('tfDevices') ? await read(req, res, s, 'tfDevices', (r) => (r.devices as unknown[]).length) : 0;
    const pending = all.methods.some((m) => m.status === 'pending_setup' && m.method === 'totp');
    const totp = pending && !shown.totp && !shown.sent && !shown.codes ? await pendingTotp(req, res, s) : undefined;
    return {
      twoFactor: {
        enabled: all.enabled,
        methods,
        canAdd: offered.filter((k) => !methods.some((m) => m.method === k && (k === 'totp' || k === 'backup_codes'))),
        hasBackup: methods.some((m) => m.method === 'backup_codes'),
        devices: devices ?? 0,
      },
      totp,
    };
  }

  /** The pending authenticator setup's key and QR code, through the provider's API; none when it has none to show (too old). */
  async function pendingTotp(req: Request, res: Response, s: PageSession): Promise<Shown['totp']> {
    if (!route('tfPending')) return undefined;
    try {
      const r = await callRoute(req, res, s, 'tfPending', { params: { method: 'totp' } });
      return { method_id: String(r.method_id), qr: String(r.qr_code), secret: String(r.secret), resumed: true };
    } catch (err) {
      if (isAppError(err) && err.status === 404) return undefined;
      throw err;
    }
  }

  /** The form's `verification_code` as the API's proof (proofFrom), with the user's methods read through the API. */
  async function proofOf(req: Request, res: Response, s: PageSession) {
    const code = field(req, 'verification_code', 64).trim();
    if (!code) return {};
    return proofFrom(code, (await read(req, res, s, 'tfMethods', (r) => r.methods as TwoFactorMethod[])) ?? []);
  }

  /**
   * Adds a second-factor method: TOTP shows its QR code and asks for a first code, email and text
   * message ask for the code just sent, backup codes are shown once.
   */
  const add = action(async (req, res, s) => {
    const kind = field(req, 'method', 32);
    const proof = await proofOf(req, res, s);
    const r = await callRoute(req, res, s, 'tfSetup', { params: { method: kind }, body: { ...proof, identifier: field(req, 'identifier', 254) || undefined } });
    if (Array.isArray(r.codes)) return { codes: r.codes as string[] };
    if (kind === 'totp') return { totp: { method_id: String(r.method_id), qr: String(r.qr_code), secret: String(r.secret) } };
    // Email and text message: a code was sent to confirm the new method.
    return { sent: { method_id: String(r.method_id), kind, identifier: typeof r.identifier === 'string' ? r.identifier : '' } };
  }, 'second-step');

  /**
   * Confirms a new method with its first code (the API's verify with action "setup"). The first method
   * turns two-step verification on, and the backup codes made then are shown once (rendered, not redirected).
   */
  const confirm = action(async (req, res, s) => {
    const r = await callRoute(req, res, s, 'tfVerify', {
      body: { code: field(req, 'code', 64).trim(), method_id: field(req, 'method_id', 64), action: 'setup' },
    });
    if (Array.isArray(r.backup_codes)) return { codes: r.backup_codes as string[], outcome: 'two_factor_on' };
    return r.two_factor_turned_on ? 'two_factor_on' : 'two_factor_added';
  }, 'second-step');

  /** Cancels a setup not yet confirmed (the API's DELETE of that pending method); never a method in use. */
  const cancel = action(async (req, res, s) => {
    const id = field(req, 'method_id', 64);
    const methods = (await read(req, res, s, 'tfMethods', (r) => r.methods as TwoFactorMethod[])) ?? [];
    if (!methods.some((m) => m.id === id && m.status === 'pending_setup')) throw notFound('There is no setup to cancel');
    await callRoute(req, res, s, 'tfRemove', { params: { id } });
    return 'two_factor_cancelled';
  }, 'second-step');

  const remove = action(async (req, res, s) => {
    await callRoute(req, res, s, 'tfRemove', { params: { id: field(req, 'method_id', 64) }, body: await proofOf(req, res, s) });
    return 'two_factor_removed';
  }, 'second-step');

  const backupCodes = action(async (req, res, s) => {
    const r = await callRoute(req, res, s, 'tfBackup', { body: await proofOf(req, res, s) });
    return { codes: r.codes as string[] };
  }, 'second-step');

  const forgetDevices = action(async (req, res, s) => {
    await callRoute(req, res, s, 'tfForget');
    return 'devices';
  }, 'second-step');

  return { state, add, confirm, cancel, remove, backupCodes, forgetDevices };
}

/**
 * A second-factor proof the API asks for when 2FA is on: a code from a method already set up, and that
 * method's id (the API wants both), told by the code's shape: six digits come from the authenticator
 * app (else an email or SMS method), anything else is a backup code.
 */
function proofFrom(code: string, methods: TwoFactorMethod[]): { verification_code?: string; verification_method_id?: string } {
  if (!code) return {};
  const active = methods.filter((m) => m.status === 'active');
  const kinds = /^\d{6}$/.test(code.replace(/\s+/g, '')) ? ['totp', 'email', 'sms'] : ['backup_codes'];
  const method = kinds.map((k) => active.find((m) => m.method === k)).find(Boolean);
  return method ? { verification_code: code, verification_method_id: method.id } : { verification_code: code };
}
