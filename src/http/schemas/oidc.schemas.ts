import { z } from 'zod';
import { clientCreateSchema, clientUpdateSchema } from '../../oidc/clients.js';

/** The OIDC admin and account APIs' request schemas; create and update bodies are the client store's own. */
export const oidcClientCreateBody = clientCreateSchema;
export const oidcClientUpdateBody = clientUpdateSchema;
export const oidcClientParams = z.object({ client_id: z.string().regex(/^[\w-]{1,64}$/, 'not a client id') });
