import { AppError, type ModuleCommand, type ModuleCommandContext } from '../../src/module-api.js';
import { eraseAll, exportAll } from './service.js';

async function userByEmail({ ctx, args }: ModuleCommandContext) {
  const user = await ctx.users.findByEmail(String(args[0] ?? ''));
  if (!user) throw new AppError(404, 'NOT_FOUND', `no user with email ${String(args[0])}`);
  return user;
}

/** Operators answering a data request by email, without an admin session. */
export const commands: ModuleCommand[] = [
  {
    name: 'privacy:export',
    description: 'Print everything stored about a user (core and every module) as JSON',
    arguments: '<email>',
    async run(ctx) {
      const user = await userByEmail(ctx);
      const data = await exportAll(ctx.ctx, user.id, { actor: 'system', actorId: null });
      ctx.print(JSON.stringify(data, null, 2));
      return data;
    },
  },
  {
    name: 'privacy:erase',
    description: "Erase a user's personal data across core and every module (needs --confirm)",
    arguments: '<email>',
    options: [{ flags: '--confirm', description: 'confirm the erasure' }],
    async run(ctx) {
      if (!ctx.options.confirm) throw new AppError(400, 'CONFIRMATION_REQUIRED', 'erasure needs --confirm');
      const user = await userByEmail(ctx);
      const result = await eraseAll(ctx.ctx, user, { actor: 'system', actorId: null });
      ctx.print(`Erased ${user.id}: ${result.erased.join(', ')}`);
      return result;
    },
  },
];
