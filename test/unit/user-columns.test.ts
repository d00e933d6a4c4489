import { DataTypes } from 'sequelize';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  ERASED_USER_COLUMNS,
  EXPORTED_USER_COLUMNS,
  FLOW_OWNED_USER_COLUMNS,
  PUBLIC_USER_FIELDS,
  RESET_ON_ERASURE,
  SECRET_USER_COLUMNS,
  USER_DATE_COLUMNS,
  USER_ALIASES,
  canonicalEmail,
} from '../../src/data/models/user-columns.js';
import { CORE_USER_ATTRIBUTES } from '../../src/data/models/user.model.js';
import type { UserRecord } from '../../src/data/repositories/user-repository.js';
import { emailField } from '../../src/services/user-fields.js';
import { toPublicUser } from '../../src/services/user-view.js';

/**
 * The lists user-columns.ts replaced, as they were written out by hand before (user.model.ts,
 * user-view.ts, account-data.ts, module-context.ts, http/schemas/aliases.ts): every one derived from
 * the declaration must come out the same, so clients see byte for byte the same User object.
 */
const OLD_ATTRIBUTES = {
  id: { type: DataTypes.STRING(36), primaryKey: true },
  email: { type: DataTypes.STRING(254), allowNull: false },
  name: DataTypes.STRING(100),
  last_name: DataTypes.STRING(100),
  user_name: DataTypes.STRING(50),
  user_type: { type: DataTypes.STRING(20), allowNull: false, defaultValue: 'customer' },
  picture: DataTypes.STRING(500),
  phone: DataTypes.STRING(32),
  is_verified: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
  two_factor: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
  lang: DataTypes.STRING(16),
  metadata: DataTypes.JSON,
  tmz: DataTypes.STRING(64),
  dob: DataTypes.DATEONLY,
  display_name: DataTypes.STRING(100),
  gender: DataTypes.STRING(32),
  title: DataTypes.STRING(100),
  first_time: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
  reference_id: DataTypes.STRING(100),
  recovery_email: DataTypes.STRING(254),
  password_hash: DataTypes.STRING(100),
  password_changed_at: DataTypes.DATE,
  password_expires_at: DataTypes.DATE,
  disabled_at: DataTypes.DATE,
  deleted_at: DataTypes.DATE,
  deletion_reason: DataTypes.STRING(500),
  created_at: { type: DataTypes.DATE, allowNull: false },
  updated_at: { type: DataTypes.DATE, allowNull: false },
};
const OLD_PUBLIC = [
  'id',
  'email',
  'name',
  'last_name',
  'user_name',
  'user_type',
  'picture',
  'phone',
  'is_verified',
  'two_factor',
  'lang',
  'metadata',
  'tmz',
  'dob',
  'display_name',
  'gender',
  'title',
  'first_time',
  'created_at',
  'updated_at',
];
const OLD_CLEARED = [
  'name',
  'last_name',
  'user_name',
  'picture',
  'phone',
  'lang',
  'metadata',
  'tmz',
  'dob',
  'display_name',
  'gender',
  'title',
  'reference_id',
  'recovery_email',
  'password_hash',
];
const OLD_PROTECTED = ['id', 'email', 'password_hash', 'password_changed_at', 'user_type', 'deleted_at', 'deletion_reason', 'created_at', 'updated_at'];
const OLD_ALIASES = {
  lastName: 'last_name',
  userName: 'user_name',
  userType: 'user_type',
  isVerified: 'is_verified',
  twoFactor: 'two_factor',
  displayName: 'display_name',
  referenceId: 'reference_id',
  recoveryEmail: 'recovery_email',
};

/** An attribute as comparable data: the SQL type's text and the options. */
const shape = (a: unknown) => {
  const o = (a && typeof a === 'object' && 'type' in a ? a : { type: a }) as Record<string, unknown>;
  return { ...o, type: String(o.type) };
};

describe('user columns: one declaration', () => {
  it('when the model attributes are derived, then they are the columns, types and options written out before, in order', () => {
    expect(Object.keys(CORE_USER_ATTRIBUTES)).toEqual(Object.keys(OLD_ATTRIBUTES));
    for (const [name, attr] of Object.entries(OLD_ATTRIBUTES)) expect(shape(CORE_USER_ATTRIBUTES[name]), name).toEqual(shape(attr));
  });

  it('when the public, export, erasure and alias lists are derived, then each is the list it replaced', () => {
    expect(PUBLIC_USER_FIELDS).toEqual(OLD_PUBLIC);
    expect(EXPORTED_USER_COLUMNS).toEqual(Object.keys(OLD_ATTRIBUTES).filter((c) => c !== 'password_hash'));
    expect(ERASED_USER_COLUMNS).toEqual(OLD_CLEARED);
    expect(RESET_ON_ERASURE).toEqual({ two_factor: false });
    expect(SECRET_USER_COLUMNS).toEqual(['password_hash']);
    expect(USER_DATE_COLUMNS).toEqual(['password_changed_at', 'password_expires_at', 'disabled_at', 'deleted_at', 'created_at', 'updated_at']);
    expect(Object.entries(USER_ALIASES)).toEqual(Object.entries(OLD_ALIASES));
  });

  it('when a module patch is checked, then the old protected columns and the account-state columns are flow-owned', () => {
    expect([...FLOW_OWNED_USER_COLUMNS.keys()].sort()).toEqual([...OLD_PROTECTED, 'disabled_at', 'is_verified', 'two_factor', 'password_expires_at'].sort());
    expect(FLOW_OWNED_USER_COLUMNS.get('two_factor')).toBe('second-factor');
  });

  it('when a row is viewed, then the User object is byte for byte what the hand-written view gave', () => {
    const row = {
      ...Object.fromEntries(Object.keys(OLD_ATTRIBUTES).map((c) => [c, null])),
      id: 'u1',
      email: 'a@example.test',
      name: 'Ana',
      user_type: 'writer',
      is_verified: 1,
      two_factor: '0',
      first_time: 'true',
      metadata: '{"k":[1,2]}',
      dob: '1990-02-03',
      password_hash: '$2b$10$secret',
      disabled_at: new Date('2026-01-03T00:00:00Z'),
      created_at: new Date('2026-01-01T00:00:00Z'),
      updated_at: '2026-01-02 10:00:00.000 +00:00',
    } as unknown as UserRecord;
    expect(JSON.stringify(toPublicUser(row, []))).toBe(
      '{"id":"u1","email":"a@example.test","name":"Ana","last_name":null,"user_name":null,"user_type":"writer","picture":null,"phone":null,' +
        '"is_verified":true,"two_factor":false,"lang":null,"metadata":{"k":[1,2]},"tmz":null,"dob":"1990-02-03","display_name":null,' +
        '"gender":null,"title":null,"first_time":true,"created_at":"2026-01-01T00:00:00.000Z","updated_at":"2026-01-02T10:00:00.000Z"}',
    );
  });

  it('when the record type is derived, then required columns are never null and the others may be', () => {
    expectTypeOf<UserRecord['id']>().toEqualTypeOf<string>();
    expectTypeOf<UserRecord['is_verified']>().toEqualTypeOf<boolean>();
    expectTypeOf<UserRecord['created_at']>().toEqualTypeOf<Date>();
    expectTypeOf<UserRecord['dob']>().toEqualTypeOf<string | null>();
    expectTypeOf<UserRecord['disabled_at']>().toEqualTypeOf<Date | null>();
    expectTypeOf<UserRecord['metadata']>().toEqualTypeOf<Record<string, unknown> | null>();
  });

  it('when an address is made canonical, then it is what the email rule stores', () => {
    for (const raw of ['  Ana.Diaz@Example.TEST ', 'ana@example.test', '\tX@Y.TEST\n']) expect(canonicalEmail(raw)).toBe(emailField.parse(raw));
  });
});
