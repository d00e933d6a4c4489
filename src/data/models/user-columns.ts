/**
 * What each core column of `users` is, declared once: its type, whether it is in the spec's User
 * object, what a personal-data erasure does to it, whether the export leaves it out, which core flow
 * alone writes it, and the camelCase spelling clients may send. The model, the public view, the
 * export and erasure, the module API's refusals and the request aliases all derive from this table
 * (columns a module adds are declared in its manifest's `userFields`).
 *
 * The order is the model's, and so the key order of the public User object: do not reorder.
 */

export type UserColumnType = 'string' | 'boolean' | 'date' | 'dateonly' | 'json';

/**
 * The core flow that alone writes a column. A module's `users.patch` may write none of them; the
 * second factor is written through `users.setTwoFactor`, by a module that provides it.
 */
export type UserColumnFlow =
  | 'identity'
  | 'email-change'
  | 'password'
  | 'role'
  | 'deletion'
  | 'row-timestamps'
  | 'admin-disable'
  | 'email-verification'
  | 'second-factor';

export interface UserColumn {
  readonly type: UserColumnType;
  /** Maximum length of a string column. */
  readonly length?: number;
  readonly primaryKey?: true;
  /** NOT NULL. */
  readonly required?: true;
  readonly defaultValue?: string | boolean;
  /** In the spec's User object (every answer that carries a user). */
  readonly public?: true;
  /** What a personal-data erasure writes: NULL (`clear`) or the column's default (`default`). */
  readonly erase?: 'clear' | 'default';
  /** A secret's hash: never exported, never cached. */
  readonly secret?: true;
  /** Written only by this core flow. */
  readonly flow?: UserColumnFlow;
  /** The camelCase spelling request bodies and queries may use. */
  readonly alias?: string;
}

export const USER_COLUMNS = {
  id: { type: 'string', length: 36, primaryKey: true, public: true, flow: 'identity' },
  email: { type: 'string', length: 254, required: true, public: true, flow: 'email-change' },
  name: { type: 'string', length: 100, public: true, erase: 'clear' },
  last_name: { type: 'string', length: 100, public: true, erase: 'clear', alias: 'lastName' },
  user_name: { type: 'string', length: 50, public: true, erase: 'clear', alias: 'userName' },
  user_type: { type: 'string', length: 20, required: true, defaultValue: 'customer', public: true, flow: 'role', alias: 'userType' },
  picture: { type: 'string', length: 500, public: true, erase: 'clear' },
  phone: { type: 'string', length: 32, public: true, erase: 'clear' },
  is_verified: { type: 'boolean', required: true, defaultValue: false, public: true, flow: 'email-verification', alias: 'isVerified' },
  two_factor: { type: 'boolean', required: true, defaultValue: false, public: true, erase: 'default', flow: 'second-factor', alias: 'twoFactor' },
  lang: { type: 'string', length: 16, public: true, erase: 'clear' },
  metadata: { type: 'json', public: true, erase: 'clear' },
  tmz: { type: 'string', length: 64, public: true, erase: 'clear' },
  dob: { type: 'dateonly', public: true, erase: 'clear' },
  display_name: { type: 'string', length: 100, public: true, erase: 'clear', alias: 'displayName' },
  gender: { type: 'string', length: 32, public: true, erase: 'clear' },
  title: { type: 'string', length: 100, public: true, erase: 'clear' },
  first_time: { type: 'boolean', required: true, defaultValue: true, public: true },
  reference_id: { type: 'string', length: 100, erase: 'clear', alias: 'referenceId' },
  recovery_email: { type: 'string', length: 254, erase: 'clear', alias: 'recoveryEmail' },
  password_hash: { type: 'string', length: 100, erase: 'clear', secret: true, flow: 'password' },
  password_changed_at: { type: 'date', flow: 'password' },
  /** A generated initial password's end (24 h after `init` or `user create` made it up); cleared by any password set since. */
  password_expires_at: { type: 'date', flow: 'password' },
  disabled_at: { type: 'date', flow: 'admin-disable' },
  deleted_at: { type: 'date', flow: 'deletion' },
  deletion_reason: { type: 'string', length: 500, flow: 'deletion' },
  created_at: { type: 'date', required: true, public: true, flow: 'row-timestamps' },
  updated_at: { type: 'date', required: true, public: true, flow: 'row-timestamps' },
} as const satisfies Record<string, UserColumn>;

export type CoreUserColumn = keyof typeof USER_COLUMNS;

type Declared = typeof USER_COLUMNS;
type ValueOf<T extends UserColumnType> = T extends 'string' | 'dateonly'
  ? string
  : T extends 'boolean'
    ? boolean
    : T extends 'date'
      ? Date
      : Record<string, unknown>;
type NullUnlessRequired<C> = C extends { required: true } | { primaryKey: true } ? never : null;

/** A users row's core columns, typed from the declaration. */
export type CoreUserValues = { -readonly [K in CoreUserColumn]: ValueOf<Declared[K]['type']> | NullUnlessRequired<Declared[K]> };

const entries = Object.entries(USER_COLUMNS) as [CoreUserColumn, UserColumn][];
const where = (test: (c: UserColumn) => boolean): CoreUserColumn[] => entries.filter(([, c]) => test(c)).map(([name]) => name);

/** The spec's User fields, in order. Nothing else from a users row goes on the wire. */
export const PUBLIC_USER_FIELDS = where((c) => c.public === true);

/** Core columns in a personal-data export: all of them but secrets' hashes. */
export const EXPORTED_USER_COLUMNS = where((c) => !c.secret);

/** Columns holding a point in time (JSON copies of a row, in the caches, revive them as Dates). */
export const USER_DATE_COLUMNS = where((c) => c.type === 'date');

/** Secrets' hashes: never exported, never kept in a cache. */
export const SECRET_USER_COLUMNS = where((c) => c.secret === true);

/** Columns an erasure sets to NULL (the row stays, anonymized). */
export const ERASED_USER_COLUMNS = where((c) => c.erase === 'clear');

/** Columns an erasure resets to their default. */
export const RESET_ON_ERASURE = Object.fromEntries(entries.filter(([, c]) => c.erase === 'default').map(([name, c]) => [name, c.defaultValue]));

/** Columns a module may not write through `users.patch`: each has its own core flow. */
export const FLOW_OWNED_USER_COLUMNS: ReadonlyMap<string, UserColumnFlow> = new Map(entries.flatMap(([name, c]) => (c.flow ? [[name, c.flow]] : [])));

/** camelCase spellings clients send → the snake_case names the API keeps. */
export const USER_ALIASES: Readonly<Record<string, string>> = Object.fromEntries(entries.flatMap(([name, c]) => (c.alias ? [[c.alias, name]] : [])));

/** The one canonical form of an email address: what `emailField` stores and every lookup compares. */
export const canonicalEmail = (address: string): string => address.trim().toLowerCase();
