import { describe, expect, it } from 'vitest';
import type { UserRecord } from '../../src/data/repositories/user-repository.js';
import { adminUpdateEvents, createdEvent, patchEvent, patchMayBeAudited } from '../../src/services/user-audit.js';

const user = {
  id: 'u-1',
  email: 'ana@example.test',
  name: 'Ana',
  phone: null,
  user_type: 'customer',
  is_verified: false,
  two_factor: true,
  disabled_at: null,
  metadata: { a: 1 },
  dob: '1990-01-01',
} as unknown as UserRecord;

describe('which user changes are events, and with what', () => {
  it('when an admin changes the role, the address, the state and other fields, then each has its event and user.updated names only the rest', () => {
    const events = adminUpdateEvents(user, {
      user_type: 'writer',
      email: 'new@example.test',
      disabled_at: new Date(),
      name: 'Ana',
      phone: '+34600000000',
      is_verified: true,
      two_factor: false,
    });
    expect(events).toEqual([
      { type: 'user.role_changed', userId: 'u-1', details: { from: 'customer', to: 'writer' } },
      { type: 'email.changed', userId: 'u-1', details: { identifier: user.email } },
      { type: 'user.disabled', userId: 'u-1', details: {} },
      { type: 'user.updated', userId: 'u-1', details: { fields: ['is_verified', 'phone', 'two_factor'] } },
    ]);
    // The previous address is the identifier (erased with the user's events); no other value is kept.
    expect(JSON.stringify(events)).not.toMatch(/new@example|\+34/);
  });

  it('when an admin sends what is stored already, or enables a disabled user, then only the real change is recorded', () => {
    expect(adminUpdateEvents(user, { name: 'Ana', email: 'ana@example.test', user_type: 'customer', disabled_at: null })).toEqual([]);
    const disabled = { ...user, disabled_at: new Date() } as UserRecord;
    expect(adminUpdateEvents(disabled, { disabled_at: null }).map((e) => e.type)).toEqual(['user.enabled']);
    expect(adminUpdateEvents(disabled, { disabled_at: disabled.disabled_at }).map((e) => e.type)).toEqual([]);
  });

  it('when a patch touches flow-owned columns, bookkeeping or erases the user, then it is no user.updated; JSON values compare by content', () => {
    expect(patchMayBeAudited({ is_verified: true })).toBe(false);
    expect(patchMayBeAudited({ two_factor: false, first_time: false })).toBe(false);
    expect(patchMayBeAudited({ name: null, deleted_at: new Date() })).toBe(false);
    expect(patchEvent(user, { metadata: { a: 1 }, name: 'Ana' }, 'u-1')).toBeNull();
    expect(patchEvent(user, { metadata: { a: 2 }, first_time: false, title: 'Dr' }, 'u-1')).toEqual({
      type: 'user.updated',
      userId: 'u-1',
      details: { fields: ['metadata', 'title'] },
    });
  });

  it('when a user is created, then registration and social sign-up are the new user acting, admin and CLI take the scope', () => {
    const created = { ...user, user_type: 'customer' } as UserRecord;
    expect(createdEvent(created, 'registration')).toEqual({
      type: 'user.created',
      userId: 'u-1',
      actor: { id: 'u-1', user_type: 'customer' },
      details: { via: 'registration', user_type: 'customer' },
    });
    expect(createdEvent(created, 'social', 'github').details).toEqual({ via: 'social', user_type: 'customer', provider: 'github' });
    expect(createdEvent(created, 'admin')).not.toHaveProperty('actor');
    expect(createdEvent(created, 'cli')).not.toHaveProperty('actor');
  });
});
