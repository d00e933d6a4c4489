import { describe, expect, it } from 'vitest';
import type { UserFieldDef } from '../../src/data/models/user.model.js';
import type { UserRecord } from '../../src/data/repositories/user-repository.js';
import { toPublicUser } from '../../src/services/user-view.js';

const record = (over: Partial<UserRecord> = {}): UserRecord =>
  ({
    id: 'u1',
    email: 'a@example.com',
    name: 'A',
    user_type: 'customer',
    is_verified: 1,
    two_factor: 0,
    first_time: 'true',
    metadata: '{"k":1}',
    password_hash: '$2b$12$secret',
    created_at: new Date('2026-01-01T00:00:00Z'),
    updated_at: '2026-01-02T00:00:00Z',
    ...over,
  }) as unknown as UserRecord;

const NO_FIELDS: UserFieldDef[] = [];

describe('toPublicUser', () => {
  it('when the same record is viewed twice, then the same frozen view comes back, without secrets', () => {
    const u = record();
    const view = toPublicUser(u, NO_FIELDS);
    expect(toPublicUser(u, NO_FIELDS)).toBe(view);
    expect(Object.isFrozen(view)).toBe(true);
    expect(view).toMatchObject({
      id: 'u1',
      is_verified: true,
      two_factor: false,
      first_time: true,
      metadata: { k: 1 },
      created_at: '2026-01-01T00:00:00.000Z',
    });
    expect(view).not.toHaveProperty('password_hash');
    expect(() => {
      (view as Record<string, unknown>).name = 'changed';
    }).toThrow(TypeError);
  });

  it('when the record is replaced or the module fields change, then a fresh view is built', () => {
    const u = record();
    const first = toPublicUser(u, NO_FIELDS);
    expect(toPublicUser(record({ name: 'B' }), NO_FIELDS).name).toBe('B');
    const fields = [{ name: 'biz_name', type: 'string' }] as unknown as UserFieldDef[];
    const withBiz = toPublicUser({ ...u, biz_name: 'Acme' } as UserRecord, fields);
    expect(withBiz).toHaveProperty('biz_name', 'Acme');
    const again = toPublicUser(u, fields);
    expect(again).not.toBe(first);
    expect(again).toHaveProperty('biz_name', null);
  });
});
