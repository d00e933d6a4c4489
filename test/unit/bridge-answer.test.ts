import { describe, expect, it } from 'vitest';
import type { SessionRecord } from '../../src/data/repositories/session-repository.js';
import { bridgeAnswer, bridgeHeadText } from '../../src/http/routes/bridge-answer.js';
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
  it('when the cached head and the per-request fields are joined, then the text is the JSON of the whole answer', () => {
    const text = bridgeAnswer(bridgeHeadText(session, user), perRequest);
    expect(JSON.parse(text)).toEqual({
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
    });
  });

  it('when the head is empty or not an object, then the answer is still valid JSON or refused', () => {
    expect(JSON.parse(bridgeAnswer('{}', perRequest))).toEqual(perRequest);
    expect(() => bridgeAnswer('[1]', perRequest)).toThrow(/JSON object/);
    expect(() => bridgeAnswer('{"a":1', perRequest)).toThrow(/JSON object/);
  });
});
