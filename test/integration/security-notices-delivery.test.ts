import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { withAuditScope } from '../../src/audit/audit-scope.js';
import type { AuditEvent } from '../../src/audit/audit-types.js';
import { createNewDeviceDetector } from '../../src/audit/new-device.js';
import { createSecurityNotices } from '../../src/audit/security-notices.js';
import { createAccountNotifier } from '../../src/services/account-notify.js';
import { startAppWithMail } from '../helpers/app-with-mail.js';
import { makeUser, uniqueEmail } from '../helpers/factories.js';
import { captureLog, startTestApp } from '../helpers/test-app.js';
import { mailsTo, mailTo } from './flows-helpers.js';

/** How security notices are delivered: after the answer, never failing the change, any event type by name. */

const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const scope = (user: { id: string; user_type: string }) => ({
  actor: { id: user.id, user_type: user.user_type },
  ip: '203.0.113.9',
  userAgent: FIREFOX_LINUX,
  requestId: 'req-notice',
});

/** A local port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('security notice delivery', () => {
  it('when the SMTP server is down, then the event is still committed, nothing is thrown and the failure is logged', async () => {
    const log = captureLog();
    const t = await startTestApp({ env: { SMTP_URL: `smtp://127.0.0.1:${await closedPort()}`, LOG_LEVEL: 'warn' }, logTo: log.stream });
    try {
      const user = await makeUser(t, { email: uniqueEmail('smtp-down') });
      const event = await withAuditScope(scope(user), () => t.app.services.audit.record({ type: 'password.changed', userId: user.id }));
      await t.app.services.deferred.idle();
      const { events } = await t.app.services.audit.list({ userId: user.id });
      expect(events.map((e) => e.id)).toEqual([event.id]);
      expect(log.text()).toContain('account mail not sent');
      expect(log.text()).not.toContain(user.email);
    } finally {
      await t.close();
    }
  });

  it('when the SMTP server is slow, then the event is written without waiting for it and the mail arrives afterwards', async () => {
    const env = await startAppWithMail({ delayMs: 1500 });
    try {
      const user = await makeUser(env.t, { email: uniqueEmail('slow-smtp') });
      const started = Date.now();
      await withAuditScope(scope(user), () => env.t.app.services.audit.record({ type: 'two_factor.disabled', userId: user.id }));
      expect(Date.now() - started).toBeLessThan(1000);
      expect(mailsTo(env.smtp, user.email)).toEqual([]);
      await mailTo(env.smtp, user.email, /^Two-factor authentication was turned off/);
    } finally {
      await env.close();
    }
  });

  it('when a module records passkeys.added or passkeys.removed, then the user gets the passkey mail (the types are handled by name)', async () => {
    const env = await startAppWithMail();
    try {
      const { t, smtp } = env;
      const user = await makeUser(t, { email: uniqueEmail('passkey'), lang: 'es' });
      const notices = createSecurityNotices({
        config: t.app.config,
        users: t.app.repos.users,
        notify: createAccountNotifier({
          mailer: t.app.services.mailer,
          sms: t.app.services.sms,
          limiter: t.app.limiter,
          config: t.app.config,
          logger: t.app.logger,
        }),
        detector: createNewDeviceDetector({ repo: t.app.repos.audit }),
        later: (what, work) => t.app.services.deferred.later(what, work),
        logger: t.app.logger,
      });
      const base: AuditEvent = {
        id: '019ac000-0000-7000-8000-000000000001',
        type: 'passkeys.added',
        at: new Date().toISOString(),
        outcome: 'success',
        actor: { id: user.id, user_type: user.user_type },
        user_id: user.id,
        ip: '203.0.113.9',
        user_agent: FIREFOX_LINUX,
        request_id: null,
        details: { name: 'Portátil' },
      };
      notices.handle(base);
      notices.handle({ ...base, type: 'passkeys.removed' });
      notices.handle({ ...base, type: 'passkeys.renamed' });
      const added = await mailTo(smtp, user.email, /^Se añadió una llave de acceso a tu cuenta de Gatehouse$/);
      expect(added.text).toContain('Se añadió una llave de acceso (Portátil)');
      await mailTo(smtp, user.email, /^Se quitó una llave de acceso de tu cuenta de Gatehouse$/);
      await t.app.services.deferred.idle();
      expect(mailsTo(smtp, user.email)).toHaveLength(2);
    } finally {
      await env.close();
    }
  });
});
