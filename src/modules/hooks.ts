import type { SessionRecord } from '../data/repositories/session-repository.js';
import type { UserRecord } from '../data/repositories/user-repository.js';

/** How a user proved who they are; the sign-in seam (services/sign-in.ts) names it in its events. */
export type SignInMethod = 'password' | 'token-login' | `social:${string}` | (string & {});

export interface SignInClient {
  ip?: string | null;
  userAgent?: string | null;
  deviceId?: string | null;
  /** A trusted-device token (cookie `trusted_device` or header X-Trusted-Device) offered to the two-factor provider. */
  trustedDevice?: string | null;
}

/**
 * What handlers of 'auth.two_factor.methods' get. A provider (a module) pushes the methods the
 * pending session may use and sets `provided`; it may set `trusted` when the client presented a device
 * it trusts for this user (the second step is then skipped). With nobody providing, sign-in fails closed.
 */
export interface TwoFactorMethodsPayload {
  user: UserRecord;
  /** The pending session (null while deciding at sign-in, and on current-user reads). */
  session: SessionRecord | null;
  method: SignInMethod | null;
  /** The signing-in client; null on current-user reads. */
  client: SignInClient | null;
  methods: unknown[];
  provided: boolean;
  trusted: boolean;
}

/**
 * The hook catalogue: every event core raises, with its payload. Events ending in `.before` run
 * before the operation and may refuse it (a handler throws an AppError, which becomes the answer);
 * the others report something already committed, and a failing handler is logged, never fatal.
 */
export interface HookEvents {
  /** A sign-in proved the first factor; throw to refuse it (before any session exists). */
  'auth.sign_in.before': { user: UserRecord; method: SignInMethod; client: SignInClient };
  /** A full (active) session was opened by a sign-in. */
  'auth.login': { user: UserRecord; session: SessionRecord; method: SignInMethod };
  /**
   * A user with two-factor on is signing in (session null, client set), or a pending session asks again
   * (session, method and client null): the provider pushes the methods the client may use to finish.
   */
  'auth.two_factor.methods': TwoFactorMethodsPayload;
  /** A user was created by signing up; `method` says how when it was not the registration form ('social:github'). */
  'auth.registered': { user: UserRecord; method?: SignInMethod };
  'user.updated': { user: UserRecord };
  'user.deleted': { user: UserRecord };
  'user.erased': { user_id: string };
}

export type HookEvent = keyof HookEvents;
/** A catalogue event's payload; events outside the catalogue (tests, module-to-module) carry a record. */
export type HookPayload<E extends string> = E extends HookEvent ? HookEvents[E] : Record<string, unknown>;
export type HookHandler<E extends string = string> = (payload: HookPayload<E>) => Promise<void> | void;
/** Runs the handler only for payloads it matches (e.g. one sign-in method, one user type). */
export type HookMatcher<E extends string = string> = (payload: HookPayload<E>) => boolean;

/**
 * Named hooks through which modules change core behaviour without editing core. Handlers run in
 * registration order; a throwing handler stops the run (for `.before` events, the operation).
 */
export interface Hooks {
  on<E extends string>(event: E, handler: HookHandler<E>, owner?: string, when?: HookMatcher<E>): () => void;
  run<E extends string>(event: E, payload: HookPayload<E>): Promise<void>;
  /** Removes every handler an owner (module id) registered. */
  removeOwner(owner: string): void;
}

interface Entry {
  fn: (payload: unknown) => Promise<void> | void;
  owner?: string;
  when?: (payload: unknown) => boolean;
}

export function createHooks(): Hooks {
  const handlers = new Map<string, Entry[]>();
  return {
    on(event, fn, owner, when) {
      const entry: Entry = { fn: fn as Entry['fn'], owner, when: when as Entry['when'] };
      handlers.set(event, [...(handlers.get(event) ?? []), entry]);
      return () => {
        const l = handlers.get(event);
        if (l)
          handlers.set(
            event,
            l.filter((e) => e !== entry),
          );
      };
    },
    async run(event, payload) {
      for (const { fn, when } of handlers.get(event) ?? []) {
        if (!when || when(payload)) await fn(payload);
      }
    },
    removeOwner(owner) {
      for (const [event, list] of handlers)
        handlers.set(
          event,
          list.filter((e) => e.owner !== owner),
        );
    },
  };
}
