import type { Transaction } from 'sequelize';
import { z } from 'zod';
import type { AppContext } from '../../src/app-context.js';
import type { UserRecord } from '../../src/data/repositories/user-repository.js';
import { AppError, badRequest } from '../../src/errors/app-error.js';
import { eraseCore, exportCore } from './core-data.js';
import { listEvents, recordEvent, eventModel, type Actor } from './events.js';
import { PRIVACY_COLUMNS } from './migrations/20261121-1200-add-privacy-columns.js';

export const MODULE_ID = 'privacy';
export const DEFAULT_REGIONS = ['EU', 'EEA', 'UK', 'US-CA', 'US', 'OTHER'];
const COLUMNS = Object.keys(PRIVACY_COLUMNS);

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

export const regionsOf = (app: AppContext) => app.modules.config<PrivacyConfig>(MODULE_ID).allowed_regions ?? DEFAULT_REGIONS;

export async function readPrivacy(app: AppContext, userId: string): Promise<PrivacyState> {
  const [rows] = await app.sequelize.query(`SELECT ${COLUMNS.join(', ')} FROM users WHERE id = ?`, { replacements: [userId] });
  const r = ((rows as Record<string, unknown>[])[0] ?? {}) as Record<string, unknown>;
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
    gdpr_consent_version: z.string().trim().min(1).max(32).regex(/^[A-Za-z0-9._-]+$/, 'must be a version such as 2026-01 or v3').optional(),
    ccpa_applies: z.boolean('must be true or false').optional(),
    ccpa_opt_out: z.boolean('must be true or false').optional(),
    privacy_region: z.string().trim().toUpperCase().optional(),
  })
  .refine((b) => Object.keys(b).length > 0, 'send at least one of gdpr_consent, ccpa_applies, ccpa_opt_out, privacy_region');
export type PrivacyUpdate = z.output<typeof privacyUpdateSchema>;

/** Applies a consent change and records each change in the history, in one transaction. */
export async function updatePrivacy(app: AppContext, userId: string, input: PrivacyUpdate, by: Actor): Promise<PrivacyState> {
  if (input.gdpr_consent === true && !input.gdpr_consent_version) {
    throw badRequest('gdpr_consent_version is required when giving consent', [{ field: 'gdpr_consent_version', message: 'required when gdpr_consent is true' }]);
  }
  if (input.gdpr_consent_version && input.gdpr_consent !== true) {
    throw badRequest('gdpr_consent_version goes with gdpr_consent: true', [{ field: 'gdpr_consent_version', message: 'send it with gdpr_consent: true' }]);
  }
  const regions = regionsOf(app);
  if (input.privacy_region !== undefined && !regions.includes(input.privacy_region)) {
    throw badRequest(`privacy_region must be one of ${regions.join(', ')}`, [{ field: 'privacy_region', message: `must be one of ${regions.join(', ')}` }]);
  }
  const before = await readPrivacy(app, userId);
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
  if (!events.length) return before;
  await app.sequelize.transaction(async (transaction) => {
    const cols = Object.keys(set);
    await app.sequelize.query(`UPDATE users SET ${cols.map((c) => `${c} = ?`).join(', ')}, updated_at = ? WHERE id = ?`, {
      replacements: [...cols.map((c) => set[c]), now, userId],
      transaction,
    });
    for (const e of events) await recordEvent(app.sequelize, { userId, kind: e.kind, details: e.details, by, at: now }, transaction);
  });
  await app.services.sessions.invalidateUser(userId);
  return readPrivacy(app, userId);
}

export const history = (app: AppContext, userId: string, page: number, limit: number) => listEvents(app.sequelize, userId, page, limit);

/** Everything stored about a user: core, then each module with data (its own exporters). */
export async function exportAll(app: AppContext, userId: string, by: Actor) {
  const modules: Record<string, Record<string, unknown>> = {};
  for (const { module, exporter } of app.modules.exporters()) {
    try {
      const part = await exporter.run({ app, userId });
      (modules[module] ??= {})[exporter.name] = part;
    } catch (err) {
      // A module uninstalled while the export ran has no data left to export.
      if (app.modules.isEnabled(module)) throw err;
    }
  }
  const out = { generated_at: new Date().toISOString(), user_id: userId, core: await exportCore(app, userId), modules };
  await recordEvent(app.sequelize, { userId, kind: 'data_exported', by });
  return out;
}

/**
 * Erasure across core and every module with data, in one transaction: the user row is anonymized,
 * module data erased by each module; then sessions are revoked everywhere, caches dropped and the
 * uploaded picture file deleted.
 */
export async function eraseAll(app: AppContext, user: UserRecord, by: Actor): Promise<{ user_id: string; erased: string[] }> {
  const erased = ['core'];
  const reason = { self: 'erasure requested by the user', admin: `erasure by admin ${by.actorId}`, system: 'erasure by an operator (CLI)' }[by.actor];
  // The stored picture is personal data too; the row is read fresh (the caller's copy may be cached).
  const picture = (await app.repos.users.findById(user.id))?.picture ?? null;
  await app.sequelize.transaction(async (transaction: Transaction) => {
    for (const { module, eraser } of app.modules.erasers()) {
      await eraser.run({ app, userId: user.id, transaction });
      if (!erased.includes(module)) erased.push(module);
    }
    await eraseCore(app, user.id, reason, transaction);
    // Proof that the erasure happened, with nothing personal in it.
    await recordEvent(app.sequelize, { userId: user.id, kind: 'account_erased', details: { modules: erased }, by }, transaction);
  });
  await app.services.sessions.revokeAllForUser(user.id);
  await app.services.sessions.invalidateUser(user.id);
  // After the commit: a rolled-back erasure must not have lost the file.
  await app.services.pictures.discard(user.id, picture);
  await app.hooks.run('user.erased', { user_id: user.id }).catch((err) => app.logger.warn({ err: (err as Error).message }, 'user.erased hook failed'));
  return { user_id: user.id, erased };
}

export async function exportPrivacy({ app, userId }: { app: AppContext; userId: string }) {
  return { settings: await readPrivacy(app, userId), history: (await listEvents(app.sequelize, userId, 1, 10_000)).events };
}

export async function erasePrivacy({ app, userId, transaction }: { app: AppContext; userId: string; transaction: Transaction }) {
  await app.sequelize.query(`UPDATE users SET ${COLUMNS.map((c) => `${c} = NULL`).join(', ')} WHERE id = ?`, { replacements: [userId], transaction });
  await eventModel(app.sequelize).destroy({ where: { user_id: userId }, transaction });
}

/** A self-service erasure needs the password when the account has one. */
export async function assertCanErase(app: AppContext, user: UserRecord, password: string | undefined): Promise<void> {
  if (!user.password_hash) return;
  if (!password) throw badRequest('password is required to delete an account that has one', [{ field: 'password', message: 'required' }]);
  if (!(await app.services.passwords.verify(password, user.password_hash))) throw new AppError(401, 'INVALID_CREDENTIALS', 'Invalid password');
}
