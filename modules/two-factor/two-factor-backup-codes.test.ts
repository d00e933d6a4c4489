import { describe, expect, it } from 'vitest';
import type { ModuleContext } from '../../src/module-api.js';
import { BACKEND } from '../../test/helpers/backend.js';
import { keyedHash } from './secrets.js';
import { pendingLogin, TF, userWithEmail2fa, useWorld, type World } from './test/helpers.js';

/**
 * Backup codes under a salted password hash (ASVS 5.0 6.5.2: about 50 bits is a lookup secret under
 * 112 bits): each row holds bcrypt of its code and a 16-bit lookup, one bcrypt per attempt; rows made
 * before (a keyed hash, no lookup) still sign in once.
 */
const world = useWorld();
const verify = (w: World, session: string, code: string) => w.t.request('POST', `${TF}/verify`, { session, body: { method: 'backup_codes', code } });

async function rows(w: World, userId: string) {
  const [r] = await w.t.app.sequelize.query('SELECT id, method_id, code_hash, lookup, used_at FROM two_factor_backup_codes WHERE user_id = ?', {
    replacements: [userId],
  });
  return r as { id: string; method_id: string; code_hash: string; lookup: string | null; used_at: unknown }[];
}

/** The two-factor module's context, for writing a row as the version before wrote it. */
function moduleContext(w: World): ModuleContext {
  const m = w.t.app.modules.routes()?.installed.find((x) => x.manifest.routes.some((r) => r.path.startsWith(TF)));
  if (!m) throw new Error('the two-factor module is not installed');
  return m.context;
}

describe(`backup codes under a salted hash (${BACKEND})`, () => {
  it('when codes are made, then each row holds a bcrypt hash with its own salt and a 4-hex lookup, never the code or its keyed hash', async () => {
    const w = world();
    const { user, backupCodes } = await userWithEmail2fa(w);
    const stored = await rows(w, user.id);
    expect(stored).toHaveLength(10);
    for (const r of stored) {
      expect(r.code_hash).toMatch(/^\$2[aby]\$\d\d\$/);
      expect(r.lookup).toMatch(/^[0-9a-f]{4}$/);
    }
    expect(new Set(stored.map((r) => r.code_hash.slice(7, 29))).size).toBe(10);
    const dump = JSON.stringify(stored);
    for (const code of backupCodes) {
      expect(dump).not.toContain(code.replace('-', ''));
      expect(dump).not.toContain(keyedHash(moduleContext(w), `backup:${user.id}`, code.replace('-', '')));
    }
  });

  it('when one code is sent by ten pending sign-ins at once, then exactly one is let in and one row is used up', async () => {
    const w = world();
    const { user, backupCodes } = await userWithEmail2fa(w);
    // Signed in one after another (the account's backoff lets one password check through at a time), then raced.
    const pendings: { token: string }[] = [];
    for (let i = 0; i < 10; i++) pendings.push(await pendingLogin(w, user.email));
    const answers = await Promise.all(pendings.map((p) => verify(w, p.token, backupCodes[0])));
    expect(answers.filter((a) => a.body.session_activated === true)).toHaveLength(1);
    // The others: the code is used (INVALID_CODE), or the user's budget of failures ran out meanwhile (429).
    expect(answers.filter((a) => a.body.code === 'INVALID_CODE' || a.status === 429)).toHaveLength(9);
    expect((await rows(w, user.id)).filter((r) => r.used_at !== null)).toHaveLength(1);
  });

  it('when a code is typed in capitals with a space, it signs in; a wrong code and a used one are refused', async () => {
    const w = world();
    const { user, backupCodes } = await userWithEmail2fa(w);
    const { token } = await pendingLogin(w, user.email);
    expect((await verify(w, token, 'zzzzz-zzzzz')).body.code).toBe('INVALID_CODE');
    expect((await verify(w, token, backupCodes[1].toUpperCase().replace('-', ' '))).body).toMatchObject({ session_activated: true });
    const again = await pendingLogin(w, user.email);
    expect((await verify(w, again.token, backupCodes[1])).body.code).toBe('INVALID_CODE');
  });

  it('when a code was stored by the version before (a keyed hash, no lookup), then it signs in once', async () => {
    const w = world();
    const { user, backupMethodId } = await userWithEmail2fa(w);
    const legacy = 'abcde23456';
    await w.t.app.sequelize.query(
      'INSERT INTO two_factor_backup_codes (id, user_id, method_id, code_hash, lookup, created_at, used_at) VALUES (?, ?, ?, ?, NULL, ?, NULL)',
      { replacements: ['11111111-2222-4333-8444-555555555555', user.id, backupMethodId, keyedHash(moduleContext(w), `backup:${user.id}`, legacy), new Date()] },
    );
    const first = await pendingLogin(w, user.email);
    expect((await verify(w, first.token, 'abcde-23456')).body).toMatchObject({ session_activated: true });
    const second = await pendingLogin(w, user.email);
    expect((await verify(w, second.token, 'abcde-23456')).body.session_activated).not.toBe(true);
  });
});
