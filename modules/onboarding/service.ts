import { randomUUID } from 'node:crypto';
import type { Model } from 'sequelize';
import { AppError, badRequest, type ModuleContext, type PublicUser, type Transaction, type UserRecord } from '../../src/module-api.js';
import { splitInput, type SplitInput } from './input.js';
import { onboardingModel, WRITE_ONLY_COLUMNS } from './model.js';

export const MODULE_ID = 'onboarding';
export const DEFAULT_STEPS = ['profile', 'business', 'preferences', 'done'];
const STEP_DATA_MAX_BYTES = 8192;

export interface OnboardingConfig {
  steps: string[];
}

/** The state clients see: never a write-only column. */
export interface OnboardingState {
  id: string | null;
  user_id: string;
  status: 'not_started' | 'in_progress' | 'completed';
  step: string | null;
  completed: boolean;
  data: Record<string, unknown>;
  steps: string[];
  completed_steps: string[];
  skipped_steps: string[];
  started_at: string | null;
  completed_at: string | null;
}

/** The configured steps; the business step only while ext-business is installed (it has nothing to ask otherwise). */
export function stepsFor(ctx: ModuleContext): string[] {
  const { steps } = ctx.config<OnboardingConfig>();
  const list = steps?.length ? steps : DEFAULT_STEPS;
  return ctx.modules.isInstalled('ext-business') ? list : list.filter((s) => s !== 'business');
}

const businessFields = (ctx: ModuleContext) => (ctx.modules.isInstalled('ext-business') ? ctx.modules.userFields('ext-business') : null);

const arr = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : typeof v === 'string' ? arr(safe(v)) : []);
const obj = (v: unknown): Record<string, unknown> =>
  typeof v === 'string' ? obj(safe(v)) : v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
function safe(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return null;
  }
}
const iso = (v: unknown) => (v ? new Date(v as string).toISOString() : null);

function toState(row: Model | null, userId: string, steps: string[]): OnboardingState {
  const v = (row?.get({ plain: true }) ?? {}) as Record<string, unknown>;
  const status = (v.status as OnboardingState['status']) ?? 'not_started';
  return {
    id: (v.id as string) ?? null,
    user_id: userId,
    status,
    step: status === 'completed' ? null : ((v.step as string) ?? steps[0] ?? null),
    completed: status === 'completed',
    data: obj(v.data),
    steps,
    completed_steps: arr(v.completed_steps),
    skipped_steps: arr(v.skipped_steps),
    started_at: iso(v.started_at),
    completed_at: iso(v.completed_at),
  };
}

async function loadRow(ctx: ModuleContext, userId: string): Promise<Model> {
  const M = onboardingModel(ctx);
  const existing = await M.findOne({ where: { user_id: userId } });
  if (existing) return existing;
  const now = new Date();
  try {
    return await M.create({ id: randomUUID(), user_id: userId, status: 'not_started', created_at: now, updated_at: now });
  } catch {
    // Two first requests at once: the other one created it.
    // Non-null: the create failed on the unique user_id: the other request committed the row.
    return (await M.findOne({ where: { user_id: userId } }))!;
  }
}

/**
 * Changes the user's profile row in one transaction, reading it there first under a row lock (FOR UPDATE
 * on PostgreSQL; SQLite transactions write one at a time), so two changes at once each see the other's
 * steps instead of writing over them.
 */
async function changeRow<T>(ctx: ModuleContext, userId: string, fn: (row: Model, tx: Transaction) => Promise<T>): Promise<T> {
  await loadRow(ctx, userId);
  return ctx.db.transaction(async (tx) => {
    const row = await onboardingModel(ctx).findOne({ where: { user_id: userId }, transaction: tx, lock: true });
    if (!row) throw new Error(`the onboarding profile of ${userId} went away`);
    return fn(row, tx);
  });
}

export async function getState(ctx: ModuleContext, userId: string): Promise<OnboardingState> {
  const row = await onboardingModel(ctx).findOne({ where: { user_id: userId } });
  return toState(row, userId, stepsFor(ctx));
}

/** A profile for a user who just registered (hook), so the state exists from the start. */
export async function ensureProfile(ctx: ModuleContext, userId: string): Promise<void> {
  await loadRow(ctx, userId);
}

export async function start(ctx: ModuleContext, userId: string): Promise<OnboardingState> {
  const steps = stepsFor(ctx);
  const row = await changeRow(ctx, userId, async (r, tx) => {
    if (r.get('status') !== 'completed') {
      const now = new Date();
      await r.update({ status: 'in_progress', step: nextStep(steps, r), started_at: r.get('started_at') ?? now, updated_at: now }, { transaction: tx });
    }
    return r;
  });
  return toState(row, userId, steps);
}

function nextStep(steps: string[], row: Model, extraDone: string[] = []): string | null {
  const done = new Set([...arr(row.get('completed_steps')), ...arr(row.get('skipped_steps')), ...extraDone]);
  return steps.find((s) => !done.has(s)) ?? null;
}

function assertStep(steps: string[], step: string): void {
  if (!steps.includes(step)) {
    throw new AppError(404, 'ONBOARDING_STEP_NOT_FOUND', `Unknown onboarding step ${step}; the steps are ${steps.join(', ')}`);
  }
}

/** Completes (or skips) a step; the last step completes the onboarding. */
export async function finishStep(ctx: ModuleContext, user: UserRecord, step: string, how: 'complete' | 'skip', data?: unknown): Promise<OnboardingState> {
  const steps = stepsFor(ctx);
  assertStep(steps, step);
  const split = how === 'complete' && data !== undefined ? splitInput(data, businessFields(ctx), 'keep') : null;
  if (split && Buffer.byteLength(JSON.stringify(split.rest), 'utf8') > STEP_DATA_MAX_BYTES) {
    throw badRequest(`data: must be at most ${STEP_DATA_MAX_BYTES} bytes as JSON`);
  }
  // The profile row and the user change in one unit of work.
  const row = await changeRow(ctx, user.id, async (r, tx) => {
    const completedSteps = arr(r.get('completed_steps')).filter((s) => s !== step);
    const skippedSteps = arr(r.get('skipped_steps')).filter((s) => s !== step);
    (how === 'complete' ? completedSteps : skippedSteps).push(step);
    // A copy: the model's own object, changed in place, would look unchanged to update() and not be saved.
    const stored = { ...obj(r.get('data')) };
    if (split && Object.keys(split.rest).length) stored[step] = split.rest;
    const now = new Date();
    const next = steps.find((s) => !completedSteps.includes(s) && !skippedSteps.includes(s)) ?? null;
    await r.update(
      {
        completed_steps: completedSteps,
        skipped_steps: skippedSteps,
        data: stored,
        step: next,
        status: r.get('status') === 'completed' ? 'completed' : next ? 'in_progress' : 'completed',
        started_at: r.get('started_at') ?? now,
        ...(next || r.get('status') === 'completed' ? {} : { completed_at: now }),
        ...(split ? writeOnlyValues(r, split) : {}),
        updated_at: now,
      },
      { transaction: tx },
    );
    const values = { ...(split?.business ?? {}), ...(next ? {} : { first_time: false }) };
    if (Object.keys(values).length) await ctx.users.patch(user.id, values, { tx });
    return r;
  });
  return toState(row, user.id, steps);
}

function writeOnlyValues(row: Model, split: SplitInput): Record<string, unknown> {
  const out: Record<string, unknown> = { ...split.writeOnly };
  if (Object.keys(split.extra).length) out.acquisition_extra = { ...obj(row.get('acquisition_extra')), ...split.extra };
  return out;
}

/**
 * First-run completion: stores the write-only acquisition data and team size, the business fields
 * (ext-business installed), marks the onboarding completed and first_time false.
 */
export async function complete(ctx: ModuleContext, user: UserRecord, body: unknown): Promise<{ user: PublicUser; state: OnboardingState }> {
  const split = splitInput(body, businessFields(ctx), 'reject');
  const steps = stepsFor(ctx);
  const now = new Date();
  const { row, updated } = await changeRow(ctx, user.id, async (r, tx) => {
    await r.update(
      {
        status: 'completed',
        step: null,
        started_at: r.get('started_at') ?? now,
        completed_at: r.get('completed_at') ?? now,
        ...writeOnlyValues(r, split),
        updated_at: now,
      },
      { transaction: tx },
    );
    return { row: r, updated: await ctx.users.patch(user.id, { ...split.business, first_time: false }, { tx }) };
  });
  return { user: ctx.users.toPublic(updated), state: toState(row, user.id, steps) };
}

/** Export: the state, and which write-only fields are stored (their values are never returned). */
export async function exportOnboarding({ ctx, userId }: { ctx: ModuleContext; userId: string }) {
  const row = await onboardingModel(ctx).findOne({ where: { user_id: userId } });
  if (!row) return null;
  const stored = WRITE_ONLY_COLUMNS.filter((c) => {
    const v = row.get(c);
    return v !== null && v !== undefined && !(c === 'acquisition_extra' && !Object.keys(obj(v)).length);
  });
  return {
    state: toState(row, userId, stepsFor(ctx)),
    write_only_fields_stored: stored,
    note: 'Acquisition data and team size are write-only: stored, never returned by any read. Erasure deletes them.',
  };
}

export async function eraseOnboarding({ ctx, userId, tx }: { ctx: ModuleContext; userId: string; tx: Transaction }) {
  await onboardingModel(ctx).destroy({ where: { user_id: userId }, transaction: tx });
}
