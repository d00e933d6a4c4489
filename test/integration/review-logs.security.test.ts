import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAppContext, type AppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/load-config.js';
import { startServer, type RunningServer } from '../../src/http/server.js';
import { createLogger } from '../../src/log/logger.js';
import { BACKEND, provisionPg, type ProvisionedBackend } from '../helpers/backend.js';
import { TEST_ENV } from '../helpers/test-app.js';

/* The access log of the real app, captured: one-time tokens must not reach it, wherever in the URL they ride. */

let log = '';
let app: AppContext;
let server: RunningServer;
let provisioned: ProvisionedBackend | null = null;
let dataDir = '';

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'gh-review-logs-'));
  if (BACKEND === 'pg') provisioned = await provisionPg();
  const config = loadConfig({ env: { ...TEST_ENV, GATEHOUSE_DATA_DIR: dataDir, ...(provisioned?.env ?? {}), LOG_LEVEL: 'info' }, skipFile: true });
  const sink = new Writable({
    write(chunk, _enc, cb) {
      log += chunk.toString();
      cb();
    },
  });
  app = await createAppContext(config, { logger: createLogger('info', sink) });
  await app.migrator.apply();
  await app.modules.reload();
  server = await startServer(app, { port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await server?.close(1000);
  await app?.close();
  await provisioned?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('tokens in URLs', () => {
  it('when a reset token is checked through the legacy path form, or a login token arrives under an encoded query key, then neither is logged', async () => {
    const user = await app.services.users.create({ email: `logs.${Date.now()}@example.test`, password: 'Correct-Horse-42' }, { actor: null, verified: true });
    const reset = await app.services.tokens.issue({ kind: 'password_reset', userId: user.id, identifier: user.email, channel: 'email', ttlSec: 600 });
    const login = await app.services.tokens.issue({ kind: 'login', userId: user.id, identifier: user.email, channel: 'email', ttlSec: 600 });

    const checked = await fetch(`${server.url}/auth/password-reset/validate/${reset.token}`);
    expect(checked.status).toBe(200);
    const signedIn = await fetch(`${server.url}/auth/token/validate?%74oken=${login.token}`);
    expect(signedIn.status).toBe(200);
    await new Promise((r) => setTimeout(r, 100));

    expect(log).toContain('/auth/password-reset/validate/');
    expect(log).toContain('/auth/token/validate?');
    for (const secret of [reset.token, login.token, reset.token.slice(4, 24), login.token.slice(4, 24)]) expect(log).not.toContain(secret);
  });
});
