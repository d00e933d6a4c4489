import { describe, expect, it } from 'vitest';
import type { SessionRecord } from '../../src/data/repositories/session-repository.js';
import { bridgeAnswer, bridgeHead } from '../../src/http/routes/bridge-answer.js';
import type { PublicUser } from '../../src/services/user-view.js';

const at = new Date('2026-11-24T10:00:00Z');
const session = {
  id: 's1',
  user_id: 'u1',
  expires_at: new Date('2026-12-01T10:00:00Z'),
  ip_address: '10.0.0.1',
  user_agent: 'ua',
  last_used_at: at,
} as SessionRecord;
const user = {
  id: 'u1',
  email: 'a@x.test',
  user_type: 'customer',
  last_name: 'L',
  user_name: 'ana',
  is_verified: true,
  two_factor: false,
} as unknown as PublicUser;
const perRequest = { cached: true, cacheSource: 'ultra', timestamp: at.toISOString() };

describe('bridge answer', () => {
  it('when the cached head and the per-request fields make the answer, then the text is JSON.stringify of the whole answer, in its key order', () => {
    const { text } = bridgeAnswer(bridgeHead(session, user), perRequest);
    const expected = {
      success: true,
      valid: true,
      user: { ...user, userType: 'customer', lastName: 'L', userName: 'ana', isVerified: true, twoFactor: false },
      session: {
        id: 's1',
        userId: 'u1',
        user_id: 'u1',
        expiresAt: '2026-12-01T10:00:00.000Z',
        expires_at: '2026-12-01T10:00:00.000Z',
        ipAddress: '10.0.0.1',
        userAgent: 'ua',
        lastUsedAt: '2026-11-24T10:00:00.000Z',
        two_factor_verified: true,
      },
      expires_at: '2026-12-01T10:00:00.000Z',
      expiresAt: '2026-12-01T10:00:00.000Z',
      cached: true,
      cacheSource: 'ultra',
      timestamp: '2026-11-24T10:00:00.000Z',
    };
    expect(JSON.parse(text)).toEqual(expected);
    expect(text).toBe(JSON.stringify(expected));
  });

  it('when requests about one head come in the same millisecond from the same cache, then they share one text; any other timestamp or source gets its own', () => {
    const head = bridgeHead(session, user);
    const first = bridgeAnswer(head, { ...perRequest });
    expect(bridgeAnswer(head, { ...perRequest })).toBe(first);
    const later = bridgeAnswer(head, { ...perRequest, timestamp: '2026-11-24T10:00:00.001Z' }).text;
    expect(JSON.parse(later).timestamp).toBe('2026-11-24T10:00:00.001Z');
    const shared = bridgeAnswer(head, { ...perRequest, timestamp: '2026-11-24T10:00:00.001Z', cacheSource: 'unified' }).text;
    expect(JSON.parse(shared)).toMatchObject({ cacheSource: 'unified', cached: true });
    const db = bridgeAnswer(head, { cached: false, cacheSource: 'db', timestamp: '2026-11-24T10:00:00.001Z' }).text;
    expect(JSON.parse(db)).toMatchObject({ cacheSource: 'db', cached: false });
    // Another head (another session, or a changed user) never gets this head's text.
    const other = bridgeHead({ ...session, id: 's2' } as SessionRecord, user);
    expect(JSON.parse(bridgeAnswer(other, { ...perRequest }).text).session.id).toBe('s2');
  });

  it('when a user value needs escaping (quotes, control characters, non-ASCII), then the answer is still the one JSON text of it', () => {
    const odd = { ...user, last_name: 'O"Brien\n\u0000 ü 😀', user_name: '</script>' } as unknown as PublicUser;
    const answer = bridgeAnswer(bridgeHead(session, odd), perRequest);
    const { text } = answer;
    // Content-Length counts UTF-8 bytes, not UTF-16 code units.
    expect(answer.contentLength).toBe(String(Buffer.from(text, 'utf8').length));
    expect(Number(answer.contentLength)).toBeGreaterThan(text.length);
    expect(JSON.parse(text).user.lastName).toBe('O"Brien\n\u0000 ü 😀');
    expect(JSON.parse(text).user.last_name).toBe('O"Brien\n\u0000 ü 😀');
    expect(JSON.parse(text).user.userName).toBe('</script>');
  });
});
