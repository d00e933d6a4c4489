import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { UserFieldDef } from '../../src/data/models/user.model.js';
import type { UserRecord, UserRepository } from '../../src/data/repositories/user-repository.js';
import { createHooks } from '../../src/modules/hooks.js';
import type { ModuleManifest } from '../../src/modules/define-module.js';
import type { Transaction } from '../../src/data/unit-of-work.js';
import { createUserService, type UserServiceDeps } from '../../src/services/user-service.js';

/** An in-memory users table with just what the service asks of the repository. */
function fakeUsers(extra: UserFieldDef[] = []): UserRepository {
  const rows = new Map<string, UserRecord>();
  const copy = (u: UserRecord | undefined) => (u ? { ...u } : null);
  return {
    async findById(id, o) {
      const u = rows.get(id);
      return u && (o?.includeDeleted || !u.deleted_at) ? copy(u) : null;
    },
    async findByIds(ids, o) {
      return ids
        .map((id) => rows.get(id))
        .filter((u): u is UserRecord => Boolean(u && (o?.includeDeleted || !u.deleted_at)))
        .map((u) => ({ ...u }));
    },
    async findByEmail(email, o) {
      return copy([...rows.values()].find((u) => u.email === email.toLowerCase() && (o?.includeDeleted || !u.deleted_at)));
    },
    async findByLogin() {
      return null;
    },
    async findByPhone() {
      return null;
    },
    async userNameTaken(name, exceptId) {
      return [...rows.values()].some((u) => u.user_name?.toLowerCase() === name.toLowerCase() && u.id !== exceptId);
    },
    async create(v) {
      rows.set(v.id, { ...(v as UserRecord) });
      return copy(rows.get(v.id))!;
    },
    build: (v) => ({ ...(v as UserRecord) }),
    async update(id, v) {
      const u = rows.get(id);
      if (!u) return null;
      Object.assign(u, v, { updated_at: new Date() });
      return copy(u);
    },
    async list() {
      return { rows: [...rows.values()], total: rows.size, totalExact: true, nextCursor: null };
    },
    async warmList() {
      return false;
    },
    async count() {
      return rows.size;
    },
    async idsWhere(where) {
      return [...rows.values()].filter((u) => !u.deleted_at && Object.entries(where).every(([k, v]) => u[k] === v)).map((u) => u.id);
    },
    async readColumns(id, columns) {
      const u = rows.get(id);
      return u ? Object.fromEntries(columns.map((c) => [c, u[c] ?? null])) : null;
    },
    async clearColumns(id, columns) {
      const u = rows.get(id);
      if (u) for (const c of columns) u[c] = null;
    },
    extraFields: () => extra,
    setExtraFields() {},
  };
}

function setup(opts: { extra?: UserFieldDef[]; installed?: string[] } = {}) {
  const calls: string[] = [];
  const hooks = createHooks();
  const events: string[] = [];
  const audited: { type: string; userId: string | null; details: Record<string, unknown> }[] = [];
  hooks.on('user.updated', () => void events.push('updated'));
  hooks.on('user.deleted', () => void events.push('deleted'));
  const deps: UserServiceDeps = {
    users: fakeUsers(opts.extra),
    sessions: {
      invalidateUser: async (id) => void calls.push(`invalidate:${id}`),
      revokeAllForUser: async (id, except) => (calls.push(`revokeAll:${id}:${except ?? ''}`), 1),
      revokeById: async (id) => (calls.push(`revoke:${id}`), true),
      listForUser: async () => [],
      restamp: async (id) => void calls.push(`restamp:${id}`),
    },
    passwords: { hash: async (p) => `hashed:${p}`, verify: async () => false },
    hooks,
    modules: {
      isInstalled: (id) => (opts.installed ?? []).includes(id),
      // The registry's manifests, as far as profile updates read them: each module's fields.
      registry: () =>
        [...new Set((opts.extra ?? []).map((f) => f.module))].map((id) => ({
          id,
          userFields: (opts.extra ?? []).filter((f) => f.module === id),
          profileRefusals: [],
        })) as unknown as ModuleManifest[],
    },
    // A unit of work without a database: after-commit work runs once `fn` resolves.
    async transaction(fn) {
      const after: (() => unknown)[] = [];
      const result = await fn({ afterCommit: (f: () => unknown) => void after.push(f) } as unknown as Transaction);
      for (const f of after) await f();
      return result;
    },
    // The record, as far as the service uses it: the events it was asked to write, in order.
    audit: {
      async record(input) {
        audited.push({ type: input.type, userId: input.userId ?? null, details: input.details ?? {} });
        return {} as never;
      },
    },
    clock: () => new Date('2026-11-21T12:00:00Z'),
  };
  return { service: createUserService(deps), calls, events, audited };
}

const PW = 'Correct-Horse-42';
const admin = { id: 'admin-1', user_type: 'admin' } as UserRecord;
const sup = { id: 'super-1', user_type: 'superadmin' } as UserRecord;

describe('user service: create', () => {
  it('when input is valid, then email is lower-cased, the password hashed, and defaults applied', async () => {
    const { service } = setup();
    const u = await service.create({ email: ' Ana@Example.TEST ', password: PW, name: ' Ana ' }, { actor: null, via: 'cli' });
    expect(u).toMatchObject({ email: 'ana@example.test', name: 'Ana', user_type: 'customer', is_verified: false, password_hash: `hashed:${PW}` });
  });

  it('when opts.verified is true, then it is the default, but the input can still say false', async () => {
    const { service } = setup();
    expect((await service.create({ email: 'a@x.test', password: PW }, { actor: admin, via: 'admin', verified: true })).is_verified).toBe(true);
    expect((await service.create({ email: 'b@x.test', password: PW, is_verified: false }, { actor: admin, via: 'admin', verified: true })).is_verified).toBe(
      false,
    );
  });

  it('when the email or user name exists, then 400 with its own code', async () => {
    const { service } = setup();
    await service.create({ email: 'a@x.test', password: PW, user_name: 'Taken' }, { actor: null, via: 'cli' });
    await expect(service.create({ email: 'A@x.test', password: PW }, { actor: null, via: 'cli' })).rejects.toMatchObject({ status: 400, code: 'EMAIL_TAKEN' });
    await expect(service.create({ email: 'c@x.test', password: PW, user_name: 'taken' }, { actor: null, via: 'cli' })).rejects.toMatchObject({
      status: 400,
      code: 'USER_NAME_TAKEN',
    });
  });

  it('when a non-superadmin actor asks for a superadmin, then 403; the system and a superadmin may', async () => {
    const { service } = setup();
    await expect(service.create({ email: 'a@x.test', password: PW, user_type: 'superadmin' }, { actor: admin, via: 'admin' })).rejects.toMatchObject({
      status: 403,
    });
    await expect(service.create({ email: 'b@x.test', password: PW, user_type: 'superadmin' }, { actor: null, via: 'cli' })).resolves.toBeTruthy();
    await expect(service.create({ email: 'c@x.test', password: PW, user_type: 'superadmin' }, { actor: sup, via: 'admin' })).resolves.toBeTruthy();
  });

  it('when the password breaks the policy or a field is bad, then 400', async () => {
    const { service } = setup();
    await expect(service.create({ email: 'a@x.test', password: 'short' }, { actor: null, via: 'cli' })).rejects.toMatchObject({ status: 400 });
    await expect(service.create({ email: 'nope', password: PW }, { actor: null, via: 'cli' })).rejects.toMatchObject({ status: 400 });
    await expect(service.create({ email: 'a@x.test', user_name: 'x y' }, { actor: null, via: 'cli' })).rejects.toMatchObject({ status: 400 });
    await expect(service.create({ email: 'a@x.test', role: 'admin' } as never, { actor: null, via: 'cli' })).rejects.toMatchObject({ status: 400 });
  });
});

describe('user service: profile and module fields', () => {
  const bizFields: (UserFieldDef & { schema?: z.ZodType })[] = [
    { name: 'is_business', type: 'boolean', module: 'ext-business' },
    { name: 'biz_name', type: 'string', length: 10, module: 'ext-business' },
    { name: 'biz_country', type: 'string', module: 'ext-business', schema: z.string().regex(/^[A-Z]{2}$/) },
    { name: 'acquisition_source', type: 'string', module: 'onboarding', writeOnly: true },
  ];

  it('when ext-business is installed, then business fields are validated (module schema first) and written', async () => {
    const { service, calls, events } = setup({ extra: bizFields, installed: ['ext-business'] });
    const u = await service.create({ email: 'a@x.test', password: PW }, { actor: null, via: 'cli' });
    const updated = await service.updateProfile(u, { is_business: true, biz_name: 'ACME', biz_country: 'ES' });
    expect(updated).toMatchObject({ is_business: true, biz_name: 'ACME', biz_country: 'ES' });
    expect(calls).toContain(`invalidate:${u.id}`);
    expect(events).toEqual(['updated']);
    await expect(service.updateProfile(u, { biz_country: 'Spain' })).rejects.toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    await expect(service.updateProfile(u, { biz_name: 'x'.repeat(11) })).rejects.toMatchObject({ status: 400 });
    await expect(service.updateProfile(u, { is_business: 'yes' })).rejects.toMatchObject({ status: 400 });
  });

  it('when ext-business is not installed, then business fields answer module_not_installed', async () => {
    const { service } = setup({ extra: bizFields, installed: [] });
    const u = await service.create({ email: 'a@x.test', password: PW }, { actor: null, via: 'cli' });
    await expect(service.updateProfile(u, { biz_name: 'ACME' })).rejects.toMatchObject({ status: 400, code: 'module_not_installed' });
  });

  it('when a user is shown, then module fields appear but write-only ones never do', async () => {
    const { service } = setup({ extra: bizFields, installed: ['ext-business'] });
    const u = await service.create({ email: 'a@x.test', password: PW }, { actor: null, via: 'cli' });
    const pub = service.toPublic({ ...u, biz_name: 'ACME', acquisition_source: 'ads' });
    expect(pub.biz_name).toBe('ACME');
    expect('acquisition_source' in pub).toBe(false);
    expect('password_hash' in pub).toBe(false);
  });
});

describe('user service: admin actions', () => {
  it('when the role changes, then sessions are revoked; a plain edit keeps them', async () => {
    const { service, calls } = setup();
    const u = await service.create({ email: 'a@x.test', password: PW }, { actor: null, via: 'cli' });
    await service.adminUpdate(admin, u.id, { name: 'New' });
    expect(calls.filter((c) => c.startsWith('revokeAll'))).toEqual([]);
    await service.adminUpdate(sup, u.id, { user_type: 'writer' });
    expect(calls).toContain(`revokeAll:${u.id}:`);
  });

  it('when disabled is set and cleared, then disabled_at follows', async () => {
    const { service } = setup();
    const u = await service.create({ email: 'a@x.test', password: PW }, { actor: null, via: 'cli' });
    expect((await service.adminUpdate(admin, u.id, { disabled: true })).disabled_at).toEqual(new Date('2026-11-21T12:00:00Z'));
    expect((await service.adminUpdate(admin, u.id, { disabled: false })).disabled_at).toBeNull();
  });

  it('when the system (CLI) acts, then superadmins can be managed without an actor', async () => {
    const { service } = setup();
    const s = await service.create({ email: 's@x.test', password: PW, user_type: 'superadmin' }, { actor: null, via: 'cli' });
    expect((await service.adminUpdate(null, s.id, { user_type: 'admin' })).user_type).toBe('admin');
    expect((await service.softDelete(null, s.id, 'cleanup')).deletion_reason).toBe('cleanup');
  });

  it('when a user is soft-deleted, then the row stays with its reason, sessions go and user.deleted fires', async () => {
    const { service, calls, events } = setup();
    const u = await service.create({ email: 'a@x.test', password: PW }, { actor: null, via: 'cli' });
    const d = await service.softDelete(admin, u.id, 'spam');
    expect(d.deleted_at).toBeTruthy();
    expect(calls).toContain(`revokeAll:${u.id}:`);
    expect(events).toContain('deleted');
    await expect(service.get(u.id)).rejects.toMatchObject({ status: 404 });
  });

  it('when a password is set, then the policy applies and other sessions are revoked', async () => {
    const { service, calls } = setup();
    const u = await service.create({ email: 'a@x.test', password: PW }, { actor: null, via: 'cli' });
    await expect(service.setPassword(u.id, 'password')).rejects.toMatchObject({ status: 400 });
    const updated = await service.setPassword(u.id, 'Another-Horse-43', { exceptSessionId: 'keep' });
    expect(updated.password_hash).toBe('hashed:Another-Horse-43');
    expect(calls).toContain(`revokeAll:${u.id}:keep`);
  });

  it('when an id is malformed or unknown, then 404', async () => {
    const { service } = setup();
    await expect(service.get("1' OR 1=1")).rejects.toMatchObject({ status: 404 });
    await expect(service.get('missing')).rejects.toMatchObject({ status: 404 });
  });
});
