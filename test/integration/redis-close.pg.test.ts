import { describe, expect, it } from 'vitest';
import { captureLog, startTestApp } from '../helpers/test-app.js';

describe('closing the app with Redis (pg)', () => {
  it('when a command or the server closes its Redis client, then no outage is logged (every CLI command with REDIS_URL used to end with an error line)', async () => {
    const log = captureLog();
    const t = await startTestApp({ env: { LOG_LEVEL: 'warn' }, logTo: log.stream });
    expect(t.app.redis).toBeTruthy();
    expect((await t.request('GET', '/ready')).status).toBe(200);
    await t.close();
    expect(log.text()).not.toMatch(/redis unavailable/);
  });
});
