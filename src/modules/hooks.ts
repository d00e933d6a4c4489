/**
 * Named hooks through which modules change core behaviour (`after('auth.login')`) without editing core.
 * Handlers run in registration order; a throwing `before` handler aborts the operation.
 */
export type HookHandler = (payload: Record<string, unknown>) => Promise<void> | void;

export interface Hooks {
  on(event: string, handler: HookHandler, owner?: string): () => void;
  run(event: string, payload: Record<string, unknown>): Promise<void>;
  /** Removes every handler an owner (module id) registered. */
  removeOwner(owner: string): void;
}

export function createHooks(): Hooks {
  const handlers = new Map<string, { fn: HookHandler; owner?: string }[]>();
  return {
    on(event, fn, owner) {
      const list = handlers.get(event) ?? [];
      const entry = { fn, owner };
      list.push(entry);
      handlers.set(event, list);
      return () => {
        const l = handlers.get(event);
        if (l) handlers.set(event, l.filter((e) => e !== entry));
      };
    },
    async run(event, payload) {
      for (const { fn } of handlers.get(event) ?? []) await fn(payload);
    },
    removeOwner(owner) {
      for (const [event, list] of handlers) handlers.set(event, list.filter((e) => e.owner !== owner));
    },
  };
}
