import { AsyncLocalStorage } from 'node:async_hooks';
import type { AuditActor } from './audit-types.js';

/** Where an event comes from: the request (or CLI command) it was written in. */
export interface AuditScope {
  actor: AuditActor;
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
}

const storage = new AsyncLocalStorage<AuditScope>();

/**
 * Runs `fn` with `scope` as the source of every event it writes, however deep the services it calls:
 * the HTTP layer enters one per route handler (define-route.ts) once auth has run, the CLI one per
 * command. Jobs run outside any scope (actor null).
 */
export function withAuditScope<T>(scope: AuditScope, fn: () => T): T {
  return storage.run(scope, fn);
}

/** The scope of the running request or command, or null (a job, the system). */
export function currentAuditScope(): AuditScope | null {
  return storage.getStore() ?? null;
}

/** The CLI's scope: the operator at the host (no address, no agent). */
export const CLI_SCOPE: AuditScope = Object.freeze({ actor: Object.freeze({ via: 'cli' as const }), ip: null, userAgent: null, requestId: null });

/**
 * Runs `fn` outside any scope: a server started by a CLI command (`gatehouse serve`) is no CLI action;
 * its requests enter their own scopes and its jobs run with none (actor null).
 */
export function outsideAuditScope<T>(fn: () => T): T {
  return storage.exit(fn);
}
