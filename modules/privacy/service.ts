import { z } from 'zod';
import { AppError, badRequest, type ModuleContext, type Transaction, type UserRecord } from '../../src/module-api.js';
import { listEvents, recordEvent, eventModel, type Actor } from './events.js';

export const MODULE_ID = 'privacy';
export const DEFAULT_REGIONS = ['EU', 'EEA', 'UK', 'US-CA', 'US', 'OTHER'];

export interface PrivacyConfig {
  allowed_regions: string[];
}

export interface PrivacyState {
  gdpr_consent: boolean | null;
  gdpr_consent_at: string | null;
  gdpr_consent_version: string | null;
  ccpa_applies: boolean | null;
  ccpa_opt_out: boolean | null;
  ccpa_opt_out_at: string | null;
  privacy_region: string | null;
}

const bool = (v: unknown) => (v === null || v === undefined ? null : v === true || v === 1 || v === '1' || v === 'true');
const iso = (v: unknown) => (v ? new Date(v as string).toISOString() : null);

export const regionsOf = (ctx: ModuleContext) => ctx.config<PrivacyConfig>().allowed_regions ?? DEFAULT_REGIONS;

export async function readPrivacy(ctx: ModuleContext, userId: string): Promise<PrivacyState> {
  const r: Record<string, unknown> = (await ctx.users.ownFields(userId)) ?? {};
  return {
    gdpr_consent: bool(r.gdpr_consent),
    gdpr_consent_at: iso(r.gdpr_consent_at),
    gdpr_consent_version: (r.gdpr_consent_version as string) ?? null,
    ccpa_applies: bool(r.ccpa_applies),
    ccpa_opt_out: bool(r.ccpa_opt_out),
    ccpa_opt_out_at: iso(r.ccpa_opt_out_at),
    privacy_region: (r.privacy_region as string) ?? null,
  };
}

/** Timestamps are set here, never taken from the client: the body is strict. */
export const privacyUpdateSchema = z
  .strictObject({
    gdpr_consent: z.boolean('must be true or false').optional(),
    gdpr_consent_version: z
      .string()
      .trim()
      .min(1)
      .max(32)
      .regex(/^[A-Za-z0-9._-]+$/, 'must be a version such as 2026-01 or v3')
      .optional(),
    ccpa_applies: z.boolean('must be true or false').optional(),
    ccpa_opt_out: z.boolean('must be true or false').optional(),
    privacy_region: z.string().trim().toUpperCase().optional(),
  })
  .refine((b) => Object.keys(b).length > 0, 'send at least one of gdpr_consent, ccpa_applies, ccpa_opt_out, privacy_region');
export type PrivacyUpdate = z.output<typeof privacyUpdateSchema>;

/** Applies a consent change and records each change in the history, in one transaction. */
export async function updatePrivacy(ctx: ModuleContext, userId: string, input: PrivacyUpdate, by: Actor): Promise<PrivacyState> {
  if (input.gdpr_consent === true && !input.gdpr_consent_version) {
    throw badRequest('gdpr_consent_version is required when giving consent', [
      { field: 'gdpr_consent_version', message: 'required when gdpr_consent is true' },
    ]);
  }
  if (input.gdpr_consent_version && input.gdpr_consent !== true) {
    throw badRequest('gdpr_consent_version goes with gdpr_consent: true', [{ field: 'gdpr_consent_version', message: 'send it with gdpr_consent: true' }]);
  }
  const regions = regionsOf(ctx);
  if (input.privacy_region !== undefined && !regions.includes(input.privacy_region)) {
    throw badRequest(`privacy_region must be one of ${regions.join(', ')}`, [{ field: 'privacy_region', message: `must be one of ${regions.join(', ')}` }]);
  }
  // The users columns and the history rows in one unit of work (caches follow the commit), decided on
  // what is stored once this user's earlier change committed: the same change sent twice is recorded once.
  await ctx.db.transaction(async (tx) => {
    if (ctx.db.dialect === 'postgres') await ctx.db.exec('SELECT pg_advisory_xact_lock(hashtext(?))', [`privacy:${userId}`], { tx });
    const before = await readPrivacy(ctx, userId);
    const now = new Date();
    const set: Record<string, unknown> = {};
    const events: { kind: string; details: Record<string, unknown> }[] = [];
    if (input.gdpr_consent === true) {
      Object.assign(set, { gdpr_consent: true, gdpr_consent_at: now, gdpr_consent_version: input.gdpr_consent_version });
      events.push({ kind: 'gdpr_consent_given', details: { version: input.gdpr_consent_version } });
    } else if (input.gdpr_consent === false) {
      Object.assign(set, { gdpr_consent: false, gdpr_consent_at: now });
      events.push({ kind: 'gdpr_consent_withdrawn', details: { version: before.gdpr_consent_version } });
    }
    if (input.ccpa_applies !== undefined && input.ccpa_applies !== before.ccpa_applies) {
      set.ccpa_applies = input.ccpa_applies;
      events.push({ kind: 'ccpa_applies_changed', details: { from: before.ccpa_applies, to: input.ccpa_applies } });
    }
    if (input.ccpa_opt_out !== undefined && input.ccpa_opt_out !== before.ccpa_opt_out) {
      Object.assign(set, { ccpa_opt_out: input.ccpa_opt_out, ccpa_opt_out_at: now });
      events.push({ kind: input.ccpa_opt_out ? 'ccpa_opt_out' : 'ccpa_opt_in', details: {} });
    }
    if (input.privacy_region !== undefined && input.privacy_region !== before.privacy_region) {
      set.privacy_region = input.privacy_region;
      events.push({ kind: 'privacy_region_changed', details: { from: before.privacy_region, to: input.privacy_region } });
    }
    if (!events.length) return;
    await ctx.users.patch(userId, set, { tx });
    for (const e of events) await recordEvent(ctx, { userId, kind: e.kind, details: e.details, by, at: now }, tx);
  });
  return readPrivacy(ctx, userId);
}

export const history = (ctx: ModuleContext, userId: string, page: number, limit: number) => listEvents(ctx, userId, page, limit);

/** Everything stored about a user: core, then each module with data (its own exporters). */
export async function exportAll(ctx: ModuleContext, userId: string, by: Actor) {
  const out = await ctx.personalData.exportAll(userId);
  // The consent history's entry and the security event commit together (actor and address from the request).
  await ctx.db.transaction(async (tx) => {
    await recordEvent(ctx, { userId, kind: 'data_exported', by }, tx);
    await ctx.audit.record({ type: 'privacy.export_requested', userId, details: { by: by.actor } }, { tx });
  });
  return out;
}

/**
 * Erasure across core and every module with data, in one transaction (core's personal-data erasure),
 * with proof of it recorded in the same transaction; sessions, caches and the picture file follow.
 */
export async function eraseAll(ctx: ModuleContext, user: UserRecord, by: Actor): Promise<{ user_id: string; erased: string[] }> {
  const reason = { self: 'erasure requested by the user', admin: `erasure by admin ${by.actorId}`, system: 'erasure by an operator (CLI)' }[by.actor];
  // Asked for, on its own: the record keeps the request even if the erasure then fails.
  await ctx.audit.record({ type: 'privacy.erasure_requested', userId: user.id, details: { by: by.actor } });
  // Proof that the erasure happened, with nothing personal in it, in the erasure's transaction.
  return ctx.personalData.erase(user.id, reason, async (tx, erased) => {
    await recordEvent(ctx, { userId: user.id, kind: 'account_erased', details: { modules: erased }, by }, tx);
    await ctx.audit.record({ type: 'privacy.erasure_completed', userId: user.id, details: { by: by.actor, modules: erased } }, { tx });
  });
}

export async function exportPrivacy({ ctx, userId }: { ctx: ModuleContext; userId: string }) {
  return { settings: await readPrivacy(ctx, userId), history: (await listEvents(ctx, userId, 1, 10_000)).events };
}

export async function erasePrivacy({ ctx, userId, tx }: { ctx: ModuleContext; userId: string; tx: Transaction }) {
  await ctx.users.clearOwnFields(userId, { tx });
  await eventModel(ctx).destroy({ where: { user_id: userId }, transaction: tx });
}

/** A self-service erasure needs the password when the account has one. */
export async function assertCanErase(ctx: ModuleContext, user: UserRecord, password: string | undefined): Promise<void> {
  if (!user.password_hash) return;
  if (!password) throw badRequest('password is required to delete an account that has one', [{ field: 'password', message: 'required' }]);
  if (!(await ctx.users.verifyPassword(user, password))) throw new AppError(401, 'INVALID_CREDENTIALS', 'Invalid password');
}
