import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registry as shippedModules } from '../../modules/index.js';
import { eventTable, wireEvents, type EventTableParts } from '../../src/app-events.js';
import type { AuditEvent } from '../../src/module-api.js';
import type { Transaction } from '../../src/data/unit-of-work.js';
import { makeSession, makeUser } from '../helpers/factories.js';
import { BACKEND } from '../helpers/backend.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { testModule } from './module-helpers.js';

/** One call a table part received: which part, which event, and whether it ran inside the change's transaction. */
interface Call {
  part: string;
  what: string;
  inTx: boolean;
}

/**
 * The table's parts as recorders: `eventTable` builds the app's own rows over them and `wireEvents`
 * subscribes them to the test app's real audit record and session service, so each row is seen to fire
 * on its events, in its phase. (The parts' own effects — outbox rows, mails, ended grants — are their
 * tests': webhooks, security notices, oidc-session-grants, oidc-backchannel.)
 */
function recordingParts(t: TestApp, oidcEnabled: boolean): { parts: EventTableParts; calls: Call[] } {
  const calls: Call[] = [];
  const at = (part: string, what: string, tx: Transaction | null | undefined) => calls.push({ part, what, inTx: Boolean(tx) });
  return {
    calls,
    parts: {
      config: { oidcEnabled },
      logger: t.app.logger,
      notices: { handle: (e: AuditEvent) => void at('notices', e.type, null) },
      webhooks: {
        enqueueFor: async (e: AuditEvent, tx: Transaction) => void at('webhooks.enqueue', e.type, tx),
        wakeFor: (e: AuditEvent) => void at('webhooks.wake', e.type, null),
      },
      oidc: {
        revokeAccount: async (userId: string, tx?: Transaction | null) => void at('oidc.revokeAccount', userId, tx),
        sessionsRevoked: async (r: { ids: string[]; everyOf: string | null }, tx?: Transaction | null) =>
          void at('oidc.sessionsRevoked', r.everyOf ?? r.ids.join(','), tx),
        sessionsSignedOut: async (ids: string[], tx?: Transaction | null) => void at('oidc.sessionsSignedOut', ids.join(','), tx),
      },
      modules: { registry: () => [], isEnabled: () => false, context: () => t.app.modules.context('none') },
    },
  };
}

/** The app as shipped (the OpenID provider on) and one with the provider off. */
let t: TestApp;
let off: TestApp;
beforeAll(async () => {
  [t, off] = await Promise.all([startTestApp(), startTestApp({ env: { OIDC_ENABLED: 'false' } })]);
}, 60_000);
afterAll(() => Promise.all([t?.close(), off?.close()]));

describe(`the event table (src/app-events.ts) is what runs (${BACKEND})`, () => {
  it('when the app is built, then its table names every reaction with its events and phase, in order', () => {
    const rows = t.app.events.map((r) => [
      r.source,
      r.phase,
      r.on === '*' ? '*' : typeof r.on === 'string' ? r.on : [...r.on].sort().join(' '),
      r.reaction.split(':')[0],
    ]);
    expect(rows).toEqual([
      ['audit', 'in-transaction', '*', 'webhooks'],
      ['audit', 'in-transaction', 'email.changed password.changed password.reset user.deleted user.disabled user.role_changed', 'OpenID provider'],
      ['sessions', 'in-transaction', 'sessions.revoked', 'OpenID provider'],
      ['sessions', 'in-transaction', 'sessions.signed_out', 'OpenID provider'],
      ['audit', 'after-commit', '*', 'webhooks'],
      ['audit', 'after-commit', expect.stringContaining('password.changed'), 'security notices'],
      ['audit', 'after-commit', '*', 'modules'],
    ]);
  });

  it('when events are recorded and sessions end, then each row fires on its events only, in its phase; a rollback runs no after-commit row', async () => {
    const { parts, calls } = recordingParts(t, true);
    wireEvents(eventTable(parts), { audit: t.app.services.audit, sessions: t.app.services.sessions, logger: t.app.logger });
    const user = await makeUser(t);
    const audit = t.app.services.audit;

    await audit.record({ type: 'password.changed', userId: user.id });
    const mine = (type: string) => calls.filter((c) => c.what === type || c.what === user.id);
    expect(mine('password.changed')).toEqual([
      { part: 'webhooks.enqueue', what: 'password.changed', inTx: true },
      { part: 'oidc.revokeAccount', what: user.id, inTx: true },
      { part: 'webhooks.wake', what: 'password.changed', inTx: false },
      { part: 'notices', what: 'password.changed', inTx: false },
    ]);

    // Not a revoking event nor a notice: the catch-all rows only.
    calls.length = 0;
    await audit.record({ type: 'user.updated', userId: user.id, details: { fields: ['name'] } });
    expect(calls.map((c) => c.part)).toEqual(['webhooks.enqueue', 'webhooks.wake']);

    // Rolled back: the in-transaction rows ran inside it, nothing after.
    calls.length = 0;
    await expect(
      t.app.sequelize.transaction(async (tx) => {
        await audit.record({ type: 'user.disabled', userId: user.id }, { tx });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(calls.map((c) => [c.part, c.inTx])).toEqual([
      ['webhooks.enqueue', true],
      ['oidc.revokeAccount', true],
    ]);

    // A sign-out is `sessions.signed_out`; a revocation of every session `sessions.revoked`.
    const { token, user: signedIn } = await makeSession(t);
    const session = await t.app.services.sessions.validate(token);
    calls.length = 0;
    await t.app.services.auth.logout(token);
    expect(calls.filter((c) => c.part.startsWith('oidc.'))).toEqual([{ part: 'oidc.sessionsSignedOut', what: session.session.id, inTx: true }]);
    calls.length = 0;
    await t.app.services.sessions.create(signedIn.id);
    await t.app.sequelize.transaction((tx) => t.app.services.sessions.revokeAllForUser(signedIn.id, undefined, { tx }));
    expect(calls.filter((c) => c.part.startsWith('oidc.'))).toEqual([{ part: 'oidc.sessionsRevoked', what: signedIn.id, inTx: true }]);
  });

  it('when a module declares `events` in its manifest, then it reacts to committed events of those types while it is switched on', async () => {
    const seen: { type: string; module: string }[] = [];
    const mod = testModule('test-events', {
      events: [{ on: ['user.disabled', 'test-events.poked'], handler: (e, ctx) => void seen.push({ type: e.type, module: ctx.id }) }],
      auditEvents: [{ type: 'test-events.poked', description: 'a test event' }],
    });
    await t.app.modules.setRegistry([...shippedModules, mod]);
    await t.app.modules.hub.install(['test-events']);
    const user = await makeUser(t);
    await t.app.services.audit.record({ type: 'user.disabled', userId: user.id });
    await t.app.services.audit.record({ type: 'user.enabled', userId: user.id });
    await t.app.services.audit.record({ type: 'test-events.poked', userId: user.id });
    expect(seen).toEqual([
      { type: 'user.disabled', module: 'test-events' },
      { type: 'test-events.poked', module: 'test-events' },
    ]);
    // A rolled-back event reaches no module.
    await t.app.sequelize
      .transaction(async (tx) => {
        await t.app.services.audit.record({ type: 'user.disabled', userId: user.id }, { tx });
        throw new Error('roll back');
      })
      .catch(() => undefined);
    expect(seen).toHaveLength(2);
    await t.app.modules.hub.disable('test-events');
    await t.app.services.audit.record({ type: 'user.disabled', userId: user.id });
    expect(seen).toHaveLength(2);
  });
});

describe(`with the OpenID provider off (${BACKEND})`, () => {
  it("when a user signs out, then the table has no sign-out row and no query reads the provider's sessions", async () => {
    expect(off.app.events.some((r) => r.on === 'sessions.signed_out')).toBe(false);
    const { token } = await makeSession(off);
    const sql: string[] = [];
    // AbstractQuery's type leaves out `sql`, which the query it runs carries after the run.
    const hook = (_options: unknown, query: object) => {
      const text = (query as { sql?: unknown }).sql;
      if (typeof text === 'string') sql.push(text);
    };
    off.app.sequelize.addHook('afterQuery', 'event-table-test', hook);
    try {
      const r = await off.request('POST', '/auth/logout', { session: token });
      expect(r.status).toBe(200);
    } finally {
      off.app.sequelize.removeHook('afterQuery', 'event-table-test');
    }
    expect(sql.some((s) => /DELETE FROM .?sessions/i.test(s) || /UPDATE .?sessions/i.test(s))).toBe(true);
    expect(sql.filter((s) => s.includes('oidc_artefacts'))).toEqual([]);
  });
});
