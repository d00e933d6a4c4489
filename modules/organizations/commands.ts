import type { z } from 'zod';
import { AppError, badRequest, emailAddress, type ModuleCommand, type ModuleCommandContext, type ModuleContext } from '../../src/module-api.js';
import { findOrg, grantOf } from './access.js';
import { adminList, adminShow } from './admin.js';
import { orgNotFound } from './errors.js';
import { name as orgName, roleName, slug as orgSlug } from './input.js';
import { createInvitation } from './invitations.js';
import { addDirect, applyRole, dropMember } from './members.js';
import { insertOrg, removeOrg } from './orgs.js';

/** A value checked by the API's own rule, or a 400 naming the argument. */
function checked<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const r = schema.safeParse(value);
  if (!r.success) throw badRequest(`${what}: ${r.error.issues[0]?.message ?? 'invalid'}`);
  return r.data;
}

async function orgArg(ctx: ModuleContext, ref: unknown) {
  const org = await findOrg(ctx, String(ref ?? ''));
  if (!org) throw orgNotFound();
  return org;
}

async function userArg(ctx: ModuleContext, email: unknown) {
  const user = await ctx.users.findByEmail(checked(emailAddress, email, 'email'));
  if (!user) throw new AppError(404, 'NOT_FOUND', `no user with email ${String(email)}`);
  return user;
}

async function roleArg(ctx: ModuleContext, orgId: string, role: unknown) {
  const r = checked(roleName, role ?? 'member', 'role');
  if (!(await grantOf(ctx, orgId, r))) throw badRequest(`role: ${r} is not a role of this organization`);
  return r;
}

/**
 * The operator's commands (`gatehouse module exec organizations:<command> … [--json]`): they act as a
 * superadmin does, and keep the same rules (slug, roles, the last owner).
 */
export const commands: ModuleCommand[] = [
  {
    name: 'organizations:create',
    description: 'Create an organization owned by the user with this email',
    arguments: '<name>',
    options: [
      { flags: '--owner <email>', description: 'its owner (required)' },
      { flags: '--slug <slug>', description: 'its slug (default: made from the name)' },
    ],
    async run({ ctx, args, options, print }: ModuleCommandContext) {
      const owner = await userArg(ctx, options.owner);
      const org = await insertOrg(ctx, owner.id, {
        name: checked(orgName, args[0], 'name'),
        slug: options.slug === undefined ? undefined : checked(orgSlug, options.slug, 'slug'),
      });
      print(`Created ${org.slug} (${org.id}), owner ${owner.email}`);
      return { organization: org };
    },
  },
  {
    name: 'organizations:list',
    description: 'List organizations, newest first (--q searches name and slug)',
    options: [
      { flags: '--q <text>', description: 'a part of the name or slug' },
      { flags: '--limit <n>', description: 'at most this many (1-200, default 50)' },
    ],
    async run({ ctx, options, print }: ModuleCommandContext) {
      const limit = options.limit === undefined ? 50 : Number(options.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw badRequest('limit: must be a whole number from 1 to 200');
      const page = await adminList(ctx, { limit, q: typeof options.q === 'string' && options.q.trim() ? options.q.trim() : undefined });
      for (const o of page.organizations) print(`${o.slug}\t${o.name}\t${o.member_count} member(s)\t${o.id}`);
      if (!page.organizations.length) print('No organizations.');
      return page;
    },
  },
  {
    name: 'organizations:show',
    description: 'Show an organization (by id or slug) with its member count and owners',
    arguments: '<org>',
    async run({ ctx, args, print }: ModuleCommandContext) {
      const org = await adminShow(ctx, String(args[0] ?? ''));
      print(`${org.name} (${org.slug}, ${org.id}): ${org.member_count} member(s); owners ${org.owners.map((o) => o.email).join(', ')}`);
      return { organization: org };
    },
  },
  {
    name: 'organizations:add-member',
    description: 'Add the user with this email to an organization',
    arguments: '<org> <email>',
    options: [{ flags: '--role <role>', description: 'their role (default member)' }],
    async run({ ctx, args, options, print }: ModuleCommandContext) {
      const org = await orgArg(ctx, args[0]);
      const user = await userArg(ctx, args[1]);
      const member = await addDirect(ctx, org.id, user.id, await roleArg(ctx, org.id, options.role));
      print(`Added ${user.email} to ${org.slug} as ${member.role}`);
      return { member };
    },
  },
  {
    name: 'organizations:remove-member',
    description: 'Remove the user with this email from an organization (never its last owner)',
    arguments: '<org> <email>',
    async run({ ctx, args, print }: ModuleCommandContext) {
      const org = await orgArg(ctx, args[0]);
      const user = await userArg(ctx, args[1]);
      const member = await dropMember(ctx, org.id, user.id, false);
      print(`Removed ${user.email} from ${org.slug}`);
      return { member };
    },
  },
  {
    name: 'organizations:set-role',
    description: "Change a member's role (never the last owner's away from owner)",
    arguments: '<org> <email> <role>',
    async run({ ctx, args, print }: ModuleCommandContext) {
      const org = await orgArg(ctx, args[0]);
      const user = await userArg(ctx, args[1]);
      const member = await applyRole(ctx, org.id, user.id, await roleArg(ctx, org.id, args[2]));
      print(`${user.email} is ${member.role} of ${org.slug}`);
      return { member };
    },
  },
  {
    name: 'organizations:invite',
    description: 'Invite an email to an organization (the mail goes out as from the API)',
    arguments: '<org> <email>',
    options: [{ flags: '--role <role>', description: 'the role they join with (default member)' }],
    async run({ ctx, args, options, print }: ModuleCommandContext) {
      const org = await orgArg(ctx, args[0]);
      const email = checked(emailAddress, args[1], 'email');
      const invitation = await createInvitation(ctx, org, { email, role: await roleArg(ctx, org.id, options.role) }, null);
      print(`Invited ${email} to ${org.slug} as ${invitation.role}, until ${invitation.expires_at}`);
      return { invitation };
    },
  },
  {
    name: 'organizations:delete',
    description: 'Delete an organization with its members, roles and invitations (needs --confirm)',
    arguments: '<org>',
    options: [{ flags: '--confirm', description: 'confirm the deletion' }],
    async run({ ctx, args, options, print }: ModuleCommandContext) {
      if (!options.confirm) throw new AppError(400, 'CONFIRMATION_REQUIRED', 'deleting an organization needs --confirm');
      const org = await orgArg(ctx, args[0]);
      await removeOrg(ctx, org, { actor: null });
      print(`Deleted ${org.slug} (${org.id})`);
      return { deleted: { id: org.id, slug: org.slug } };
    },
  },
];
