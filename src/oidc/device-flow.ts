import { createHash } from 'node:crypto';
import type Provider from 'oidc-provider';
import type { AuditService } from '../audit/audit-service.js';
import type { Cache } from '../cache/cache.js';
import { DEVICE_CODE_GRANT } from './clients.js';

/**
 * The device authorization grant (RFC 8628, docs/oidc.md "Devices"). oidc-provider owns the protocol: the
 * device authorization endpoint (/oidc/device/auth), the user and device codes (its DeviceCode model, kept in
 * oidc_artefacts and consumed through the adapter's compare-and-set), and the device_code grant at /oidc/token
 * (authorization_pending, expired_token, access_denied). The page where a person types the code is
 * Gatehouse's own `/device` (src/web/pages/device.ts): a hosted page of the view layer, reached only with a
 * full Gatehouse session (the sign-in seam, two-factor included), with the pages' CSP and CSRF. It approves or
 * denies the DeviceCode through the provider's models here, as oidc-provider's own verification route would
 * after its interactions, so the token endpoint sees no difference.
 */

/** The verification URI (oidc-provider's `code_verification` route, answered by the web layer, never by the provider). */
export const DEVICE_PATH = '/device';
/** How long a device code and its user code live (RFC 8628 §3.2 `expires_in`). */
export const DEVICE_CODE_TTL = 10 * 60;
/** The polling interval the device is told (RFC 8628 §3.2 `interval`); each `slow_down` adds 5 s (§3.5). */
export const DEVICE_POLL_INTERVAL = 5;
/** User codes: 8 characters of the base-20 set (no vowels, no look-alikes), shown as XXXX-XXXX (RFC 8628 §6.1). */
const CHARSET = 'BCDFGHJKLMNPQRSTVWXZ';
const USER_CODE = new RegExp(`^[${CHARSET}]{8}$`);

/** What a typed code is looked up as: upper case, separators dropped (as oidc-provider normalizes). */
export const normalizeUserCode = (input: string) => input.toUpperCase().replace(/\W/g, '');
const display = (normalized: string) => `${normalized.slice(0, 4)}-${normalized.slice(4)}`;

type Ctx = {
  status: number;
  body: unknown;
  redirect(url: string): void;
  oidc?: { route?: string; params?: Record<string, unknown> };
};

/**
 * `features.deviceFlow`. The provider's verification route is `/device`, which the HTTP side never hands to it
 * (src/oidc/http-mount.ts forwards /oidc/* only), so its own HTML (userCodeInputSource, userCodeConfirmSource,
 * successSource) is never the answer: were one called, it sends the browser to the hosted page.
 */
export function deviceFlowFeature(errors: Record<string, new (description?: string) => Error>) {
  const toPage = async (ctx: Ctx) => {
    ctx.status = 303;
    ctx.redirect(DEVICE_PATH);
  };
  return {
    enabled: true,
    charset: 'base-20',
    mask: '****-****',
    userCodeInputSource: toPage,
    userCodeConfirmSource: toPage,
    successSource: toPage,
    // Tokens from a device code are for userinfo: the confirmation page names OpenID scopes only, so a
    // registered API (resource indicator) is refused here rather than granted unseen.
    deviceInfo(ctx: Ctx & { ip: string; get(h: string): string }) {
      if (ctx.oidc?.params?.resource !== undefined) throw new errors.InvalidTarget('the device flow does not issue tokens for a registered API');
      return { ip: ctx.ip, ua: ctx.get('user-agent') };
    },
  };
}

/**
 * The provider's middleware for the device flow: the device authorization answer names its `interval`, a client
 * without the grant is told `unauthorized_client`, and a
 * device that polls a pending code sooner than it is told gets `slow_down` with the interval 5 s longer
 * (RFC 8628 §3.5; oidc-provider has the error but not the rule). Kept in the shared cache per device code
 * (a digest of it), so it holds across instances; a code that was approved is redeemed whatever the pace.
 */
export function devicePolling(cache: Pick<Cache, 'get' | 'set'>, now: () => number) {
  return async (ctx: Ctx, next: () => Promise<unknown>) => {
    await next();
    const body = ctx.body as Record<string, unknown> | undefined;
    if (ctx.oidc?.route === 'device_authorization' && ctx.status === 200 && typeof body?.device_code === 'string') {
      body.interval = DEVICE_POLL_INTERVAL;
      return;
    }
    // A client registered without the grant: RFC 6749 §5.2's `unauthorized_client` (oidc-provider says invalid_request).
    const deviceGrant = ctx.oidc?.route === 'device_authorization' || (ctx.oidc?.route === 'token' && ctx.oidc.params?.grant_type === DEVICE_CODE_GRANT);
    if (deviceGrant && body?.error === 'invalid_request' && /is not allowed for this client$/.test(String(body.error_description))) {
      body.error = 'unauthorized_client';
      body.error_description = 'this client is not registered for the device authorization grant';
      return;
    }
    const code = ctx.oidc?.params?.device_code;
    if (ctx.oidc?.route !== 'token' || body?.error !== 'authorization_pending' || typeof code !== 'string') return;
    const key = `oidc:device-poll:${createHash('sha256').update(code).digest('base64url').slice(0, 32)}`;
    const last = JSON.parse((await cache.get(key)) ?? 'null') as { at: number; interval: number } | null;
    const at = now();
    const state = { at, interval: last?.interval ?? DEVICE_POLL_INTERVAL };
    const tooSoon = last !== null && at - last.at < last.interval * 1000;
    if (tooSoon) state.interval += 5;
    await cache.set(key, JSON.stringify(state), DEVICE_CODE_TTL);
    if (tooSoon) ctx.body = { error: 'slow_down', error_description: `polling too quickly: wait ${state.interval} seconds between requests` };
  };
}

/** A pending request as the confirmation page shows it. */
export interface DeviceRequest {
  /** The code as the device shows it (XXXX-XXXX). */
  userCode: string;
  clientId: string;
  clientName: string;
  firstParty: boolean;
  /** The OpenID scopes asked for (the consent page's names). */
  scopes: string[];
}

/** Who approves: the signed-in user and how their Gatehouse session was signed in. */
export interface DeviceApprover {
  userId: string;
  acr: string;
  amr: string[];
  /** When the Gatehouse session was signed in (the ID token's auth_time). */
  authTime: Date;
}

type DeviceCodeModel = {
  clientId: string;
  accountId?: string;
  error?: string;
  consumed?: unknown;
  isExpired: boolean;
  params?: Record<string, unknown>;
  save(): Promise<string>;
} & Record<string, unknown>;

export interface DeviceFlowDeps {
  /** This instance's provider (built by the HTTP side). */
  provider(): Promise<Provider>;
  /** The scopes the provider knows; others asked for are left out. */
  scopes: ReadonlySet<string>;
  /** The consent remembered for a user and a third-party client (its grant id). */
  consentGrant(accountId: string, clientId: string): Promise<string | null>;
  rememberConsent(accountId: string, clientId: string, grantId: string, scope: string): Promise<void>;
  audit: Pick<AuditService, 'record'>;
}

export function createDeviceFlow(deps: DeviceFlowDeps) {
  /** A pending code (not expired, not yet approved, denied or redeemed) and its client; null for anything else. */
  async function pending(input: string) {
    const normalized = normalizeUserCode(input.slice(0, 32));
    if (!USER_CODE.test(normalized)) return null;
    const p = await deps.provider();
    // oidc-provider's type declarations leave out the DeviceCode model it has at runtime (lib/models/device_code.js).
    const models = p as unknown as { DeviceCode: { findByUserCode(c: string): Promise<DeviceCodeModel | undefined> } };
    const code = await models.DeviceCode.findByUserCode(normalized);
    if (!code || code.isExpired || code.accountId || code.error || code.consumed) return null;
    const client = await p.Client.find(code.clientId);
    if (!client) return null;
    const scopes = [...new Set(String(code.params?.scope ?? '').split(' '))].filter((s) => deps.scopes.has(s));
    const request: DeviceRequest = {
      userCode: display(normalized),
      clientId: client.clientId,
      clientName: client.clientName ?? client.clientId,
      firstParty: (client as { first_party?: boolean }).first_party === true,
      scopes,
    };
    return { p, code, request };
  }

  const actor = (clientId: string) => ({ via: 'oidc_client' as const, client_id: clientId });

  return {
    /** The pending request a typed code names, or null (unknown, expired, already used: the page says only "invalid or expired"). */
    async lookup(input: string): Promise<DeviceRequest | null> {
      return (await pending(input))?.request ?? null;
    },

    /**
     * The user approves: the same grant the code flow's consent makes (a third-party client's remembered
     * consent is reused and the new one remembered; a first-party client's is not remembered), and the
     * DeviceCode carries the account and how it signed in, as oidc-provider's own verification would write
     * it. The device's next poll redeems it (once: the adapter's consume is a compare-and-set).
     */
    async approve(input: string, who: DeviceApprover): Promise<DeviceRequest | null> {
      const found = await pending(input);
      if (!found) return null;
      const { p, code, request } = found;
      const scope = request.scopes.join(' ');
      let grant: InstanceType<Provider['Grant']> | undefined;
      if (!request.firstParty) {
        const id = await deps.consentGrant(who.userId, request.clientId);
        const existing = id ? await p.Grant.find(id) : undefined;
        if (existing?.accountId === who.userId) grant = existing;
      }
      grant ??= new p.Grant({ accountId: who.userId, clientId: request.clientId });
      if (scope) grant.addOIDCScope(scope);
      const grantId = await grant.save();
      Object.assign(code, {
        accountId: who.userId,
        acr: who.acr,
        amr: who.amr.length ? who.amr : undefined,
        authTime: Math.floor(who.authTime.getTime() / 1000),
        grantId,
        scope,
      });
      await code.save();
      if (!request.firstParty) await deps.rememberConsent(who.userId, request.clientId, grantId, scope);
      await deps.audit.record({
        type: 'oidc.device_approved',
        userId: who.userId,
        actor: actor(request.clientId),
        details: { client_id: request.clientId, scope },
      });
      return request;
    },

    /** The user refuses: the device's next poll gets `access_denied` (RFC 8628 §3.5). */
    async deny(input: string, userId: string): Promise<DeviceRequest | null> {
      const found = await pending(input);
      if (!found) return null;
      Object.assign(found.code, { error: 'access_denied', errorDescription: 'The user refused access' });
      await found.code.save();
      await deps.audit.record({
        type: 'oidc.device_denied',
        outcome: 'failure',
        userId,
        actor: actor(found.request.clientId),
        details: { client_id: found.request.clientId },
      });
      return found.request;
    },
  };
}

export type DeviceFlow = ReturnType<typeof createDeviceFlow>;
