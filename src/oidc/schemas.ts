import { z } from 'zod';
import { clientCreateSchema, clientUpdateSchema } from './clients.js';
import { resourceCreateSchema, resourceUpdateSchema } from './resources.js';

/** The OIDC admin and account APIs' request schemas; create and update bodies are the client store's own. */
export const oidcClientCreateBody = clientCreateSchema;
export const oidcClientUpdateBody = clientUpdateSchema;
export const oidcClientParams = z.object({ client_id: z.string().regex(/^[\w-]{1,64}$/, 'not a client id') });
export const oidcResourceCreateBody = resourceCreateSchema;
export const oidcResourceUpdateBody = resourceUpdateSchema;
/** A resource's identifier is a URL: percent-encoded whole in the path (`https%3A%2F%2Fapi.example.com`). */
export const oidcResourceParams = z.object({ identifier: z.string().min(1).max(500) });
