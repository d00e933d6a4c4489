import type { Response } from 'express';
import { z } from 'zod';
import { defineRoute, moduleEnvelope } from '../../src/module-api.js';
import {
  acceptBody,
  createBody,
  invitationParams,
  inviteBody,
  memberParams,
  memberPatch,
  orgParams,
  roleBody,
  roleParams,
  rolePatch,
  updateBody,
} from './input.js';
import { adminRoutes } from './admin.js';
import { acceptInvitation, acceptInvitationById, invite, listInvitations, myInvitations, previewInvitation, revokeInvitation } from './invitations.js';
import { listMembers, removeMember, setRole } from './members.js';
import { createOrg, deleteOrg, getOrg, listMine, updateOrg } from './orgs.js';
import { pageQuery } from './page.js';
import { createRole, deleteRole, listRoles, updateRole } from './roles.js';

const MODULE = 'organizations';
const BASE = '/auth/organizations';
const page = z.object(pageQuery);

/** A 201 answer: core sends what a handler returns as 200, so a creation writes its own. */
export function created(res: Response, body: unknown): void {
  res.status(201).json(body);
}

export const create = defineRoute({
  method: 'post',
  path: BASE,
  summary: 'Create an organization (you become its owner)',
  auth: 'session',
  module: MODULE,
  body: createBody,
  async handler({ ctx, auth, body, res }) {
    const organization = await createOrg(ctx, auth, body);
    created(res, moduleEnvelope({ organization }, auth));
  },
});

export const mine = defineRoute({
  method: 'get',
  path: BASE,
  summary: 'Your organizations, each with your role',
  auth: 'session',
  module: MODULE,
  query: page,
  handler: async ({ ctx, auth, query }) => moduleEnvelope(await listMine(ctx, auth.user.id, query), auth),
});

export const show = defineRoute({
  method: 'get',
  path: `${BASE}/:id`,
  summary: 'One organization (by id or slug)',
  auth: 'session',
  module: MODULE,
  params: orgParams,
  handler: async ({ ctx, auth, params }) => moduleEnvelope({ organization: await getOrg(ctx, auth, params.id) }, auth),
});

export const update = defineRoute({
  method: 'patch',
  path: `${BASE}/:id`,
  summary: 'Change an organization (org:update)',
  auth: 'session',
  module: MODULE,
  params: orgParams,
  body: updateBody,
  handler: async ({ ctx, auth, params, body }) => moduleEnvelope({ organization: await updateOrg(ctx, auth, params.id, body) }, auth),
});

export const remove = defineRoute({
  method: 'delete',
  path: `${BASE}/:id`,
  summary: 'Delete an organization (org:delete)',
  auth: 'session',
  module: MODULE,
  params: orgParams,
  handler: async ({ ctx, auth, params }) => moduleEnvelope({ deleted: await deleteOrg(ctx, auth, params.id) }, auth),
});

export const memberList = defineRoute({
  method: 'get',
  path: `${BASE}/:id/members`,
  summary: "An organization's members",
  auth: 'session',
  module: MODULE,
  params: orgParams,
  query: page,
  handler: async ({ ctx, auth, params, query }) => moduleEnvelope(await listMembers(ctx, auth, params.id, query), auth),
});

export const memberRole = defineRoute({
  method: 'patch',
  path: `${BASE}/:id/members/:user_id`,
  summary: "Change a member's role (members:update_role)",
  auth: 'session',
  module: MODULE,
  params: memberParams,
  body: memberPatch,
  handler: async ({ ctx, auth, params, body }) => moduleEnvelope({ member: await setRole(ctx, auth, params.id, params.user_id, body.role) }, auth),
});

export const memberRemove = defineRoute({
  method: 'delete',
  path: `${BASE}/:id/members/:user_id`,
  summary: 'Remove a member (members:remove), or leave',
  auth: 'session',
  module: MODULE,
  params: memberParams,
  handler: async ({ ctx, auth, params }) => moduleEnvelope({ member: await removeMember(ctx, auth, params.id, params.user_id) }, auth),
});

export const roleList = defineRoute({
  method: 'get',
  path: `${BASE}/:id/roles`,
  summary: "An organization's roles (built-in and its own)",
  auth: 'session',
  module: MODULE,
  params: orgParams,
  handler: async ({ ctx, auth, params }) => moduleEnvelope(await listRoles(ctx, auth, params.id), auth),
});

export const roleCreate = defineRoute({
  method: 'post',
  path: `${BASE}/:id/roles`,
  summary: 'Add a custom role (roles:manage)',
  auth: 'session',
  module: MODULE,
  params: orgParams,
  body: roleBody,
  async handler({ ctx, auth, params, body, res }) {
    const role = await createRole(ctx, auth, params.id, body);
    created(res, moduleEnvelope({ role }, auth));
  },
});

export const roleUpdate = defineRoute({
  method: 'patch',
  path: `${BASE}/:id/roles/:name`,
  summary: "Change a custom role's permissions (roles:manage)",
  auth: 'session',
  module: MODULE,
  params: roleParams,
  body: rolePatch,
  handler: async ({ ctx, auth, params, body }) => moduleEnvelope({ role: await updateRole(ctx, auth, params.id, params.name, body.permissions) }, auth),
});

export const roleDelete = defineRoute({
  method: 'delete',
  path: `${BASE}/:id/roles/:name`,
  summary: 'Delete a custom role nobody has (roles:manage)',
  auth: 'session',
  module: MODULE,
  params: roleParams,
  handler: async ({ ctx, auth, params }) => moduleEnvelope({ role: await deleteRole(ctx, auth, params.id, params.name) }, auth),
});

export const invitationCreate = defineRoute({
  method: 'post',
  path: `${BASE}/:id/invitations`,
  summary: 'Invite someone by email (members:invite)',
  auth: 'session',
  module: MODULE,
  params: orgParams,
  body: inviteBody,
  async handler({ ctx, auth, params, body, res }) {
    created(res, moduleEnvelope({ invitation: await invite(ctx, auth, params.id, body) }, auth));
  },
});

export const invitationList = defineRoute({
  method: 'get',
  path: `${BASE}/:id/invitations`,
  summary: "An organization's pending invitations (members:invite)",
  auth: 'session',
  module: MODULE,
  params: orgParams,
  query: page,
  handler: async ({ ctx, auth, params, query }) => moduleEnvelope(await listInvitations(ctx, auth, params.id, query), auth),
});

export const invitationRevoke = defineRoute({
  method: 'delete',
  path: `${BASE}/:id/invitations/:invitation_id`,
  summary: 'Revoke a pending invitation (members:invite)',
  auth: 'session',
  module: MODULE,
  params: invitationParams,
  handler: async ({ ctx, auth, params }) => moduleEnvelope({ invitation: await revokeInvitation(ctx, auth, params.id, params.invitation_id) }, auth),
});

export const invitationAccept = defineRoute({
  method: 'post',
  path: `${BASE}/invitations/accept`,
  summary: 'Accept an invitation (the invited, verified email)',
  auth: 'session',
  module: MODULE,
  body: acceptBody,
  handler: async ({ ctx, auth, body }) => moduleEnvelope(await acceptInvitation(ctx, auth, body.token), auth),
});

export const invitationPreview = defineRoute({
  method: 'post',
  path: `${BASE}/invitations/preview`,
  summary: "An invitation's organization and role, as accept would see it",
  auth: 'session',
  module: MODULE,
  body: acceptBody,
  handler: async ({ ctx, auth, body }) => moduleEnvelope(await previewInvitation(ctx, auth, body.token), auth),
});

export const invitationsMine = defineRoute({
  method: 'get',
  path: `${BASE}/invitations/mine`,
  summary: 'The pending invitations to your verified email',
  auth: 'session',
  module: MODULE,
  handler: async ({ ctx, auth }) => moduleEnvelope(await myInvitations(ctx, auth), auth),
});

export const invitationAcceptById = defineRoute({
  method: 'post',
  path: `${BASE}/invitations/:invitation_id/accept`,
  summary: 'Accept an invitation to your verified email by its id',
  auth: 'session',
  module: MODULE,
  params: z.object({ invitation_id: invitationParams.shape.invitation_id }),
  handler: async ({ ctx, auth, params }) => moduleEnvelope(await acceptInvitationById(ctx, auth, params.invitation_id), auth),
});

export const routes = [
  create,
  mine,
  invitationAccept,
  invitationPreview,
  invitationsMine,
  invitationAcceptById,
  show,
  update,
  remove,
  memberList,
  memberRole,
  memberRemove,
  roleList,
  roleCreate,
  roleUpdate,
  roleDelete,
  invitationCreate,
  invitationList,
  invitationRevoke,
  ...adminRoutes,
];
