import type { AuditRepository, AuditSource } from '../data/repositories/audit-repository.js';
import { ipNetworkKey } from '../http/middleware/client-ip.js';
import { deviceParts } from '../services/user-agent.js';
import type { AuditEvent } from './audit-types.js';
import { eventIdFloor } from './event-id.js';

/** How far back a sign-in makes a device known. */
export const NEW_DEVICE_WINDOW_DAYS = 90;
/**
 * The most earlier sign-ins one check reads: a user who signed in more often than this within the
 * window is compared with the newest ones, which bounds the check's cost whatever the history.
 */
const MAX_COMPARED = 500;

/**
 * The browser and OS family of a User-Agent, without versions ("Chrome|macOS"), so an update is not a
 * new device. An agent none of the known families match counts by its first product token.
 */
export function deviceFamily(userAgent: string | null): string {
  if (!userAgent) return 'none';
  const { browser, system } = deviceParts(userAgent);
  if (browser || system) return `${browser ?? ''}|${system ?? ''}`;
  return `other:${userAgent.trim().split(/[\s/]/)[0].toLowerCase().slice(0, 40)}`;
}

/** The network of an address (IPv4 /24, IPv6 /48), so a new address from the same provider block is not new. */
export const networkOf = (ip: string | null): string => (ip ? ipNetworkKey(ip) : 'none');

/** What is new about a sign-in next to the user's earlier ones (empty: nothing). */
export function whatIsNew(current: Pick<AuditSource, 'ip' | 'user_agent'>, earlier: Pick<AuditSource, 'ip' | 'user_agent'>[]): ('device' | 'network')[] {
  const out: ('device' | 'network')[] = [];
  const family = deviceFamily(current.user_agent);
  if (!earlier.some((e) => deviceFamily(e.user_agent) === family)) out.push('device');
  // An event without an address (a sign-in outside a request) says nothing about networks.
  if (current.ip) {
    const network = networkOf(current.ip);
    if (!earlier.some((e) => e.ip && networkOf(e.ip) === network)) out.push('network');
  }
  return out;
}

export interface NewDeviceDetector {
  /**
   * Whether a committed `sign_in.succeeded` came from a browser/OS family or a network the user has not
   * signed in from within the window. Never for an account's first sign-in ever (nothing to compare).
   */
  judge(event: AuditEvent): Promise<('device' | 'network')[]>;
}

export function createNewDeviceDetector(deps: { repo: Pick<AuditRepository, 'sourcesOf'>; windowDays?: number }): NewDeviceDetector {
  const windowMs = (deps.windowDays ?? NEW_DEVICE_WINDOW_DAYS) * 86_400_000;
  return {
    async judge(event) {
      if (!event.user_id || event.type !== 'sign_in.succeeded' || event.outcome !== 'success') return [];
      const floor = eventIdFloor(new Date(event.at).getTime() - windowMs);
      const range = { beforeId: event.id, afterId: floor, limit: MAX_COMPARED };
      const recent = await deps.repo.sourcesOf(event.user_id, 'sign_in.succeeded', range);
      if (!recent.length) {
        // Nothing within the window: new, unless this is the first sign-in ever.
        const older = await deps.repo.sourcesOf(event.user_id, 'sign_in.succeeded', { beforeId: floor, limit: 1 });
        if (!older.length) return [];
      }
      return whatIsNew(event, recent);
    },
  };
}
