import { z } from 'zod';

/** A session's public id (what GET /auth/user/me/sessions lists), never its token. */
export const ownSessionParams = z.object({
  id: z.string().regex(/^[A-Za-z0-9-]{1,64}$/, 'a session id, as GET /auth/user/me/sessions lists it'),
});
