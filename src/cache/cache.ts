/** One cache interface; values are strings (callers JSON-encode). */
export interface Cache {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlSec: number): Promise<void>;
  /** Sets the key only where it is missing; false when it was there (or the store is down). */
  add(key: string, value: string, ttlSec: number): Promise<boolean>;
  del(...keys: string[]): Promise<void>;
  /** Deletes every key starting with `keyPrefix`; returns how many. */
  purge(keyPrefix: string): Promise<number>;
  readonly kind: 'memory' | 'redis';
}

/**
 * Keys whose only copy is in the shared store (Redis), where the Cache's "down means a miss" would lose
 * them: a call that cannot be made fails (503 with Retry-After) instead.
 */
export interface Store {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlSec: number): Promise<void>;
  /** Sets the key only where it is missing (one atomic step on every instance); false when it was there. */
  add(key: string, value: string, ttlSec: number): Promise<boolean>;
  del(key: string): Promise<void>;
}

/** Message bus between instances (Redis pub/sub) or inside one process. */
export interface Bus {
  publish(channel: string, message: unknown): Promise<void>;
  subscribe(channel: string, handler: (message: unknown) => void): Promise<void>;
  close(): Promise<void>;
}
