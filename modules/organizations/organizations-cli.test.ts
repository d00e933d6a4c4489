import { describe, expect, it } from 'vitest';
import { BACKEND } from '../../test/helpers/backend.js';
import { eventsOf, O, person, useApp } from './test/world.js';

/** The operator's commands (`gatehouse module exec organizations:<command>`), run in process as the CLI runs them. */
const app = useApp();

async function run(name: string, args: string[], options: Record<string, unknown> = {}) {
  const t = app();
  const cmd = t.app.modules.manifest('organizations')?.commands.find((c) => c.name === `organizations:${name}`);
  if (!cmd) throw new Error(`no command ${name}`);
  const lines: string[] = [];
  const value = (await cmd.run({ ctx: t.app.modules.context('organizations'), args, options, print: (l) => lines.push(l) })) as Record<string, any>;
  return { value, text: lines.join('\n') };
}

describe(`organizations: CLI commands (${BACKEND})`, () => {
  it('when an operator creates an organization, adds, promotes and removes members, invites and deletes it, then each does what the API does', async () => {
    const t = app();
    const owner = await person(t);
    const other = await person(t);
    const tag = `cli${Date.now().toString(36)}`;
    const created = await run('create', [`CLI ${tag}`], { owner: owner.user.email.toUpperCase(), slug: tag });
    expect(created.value.organization).toMatchObject({ slug: tag, name: `CLI ${tag}` });
    const id = created.value.organization.id as string;
    expect((await t.request('GET', `${O}/${tag}`, { session: owner.token })).body.data.organization.role).toBe('owner');

    expect((await run('add-member', [tag, other.user.email], { role: 'admin' })).value.member).toMatchObject({ user_id: other.user.id, role: 'admin' });
    await expect(run('add-member', [tag, other.user.email])).rejects.toMatchObject({ status: 409, code: 'ORG_ALREADY_MEMBER' });
    await expect(run('set-role', [tag, owner.user.email, 'member'])).rejects.toMatchObject({ status: 409, code: 'ORG_LAST_OWNER' });
    await expect(run('remove-member', [tag, owner.user.email])).rejects.toMatchObject({ status: 409, code: 'ORG_LAST_OWNER' });
    await expect(run('set-role', [tag, other.user.email, 'wizard'])).rejects.toMatchObject({ status: 400 });
    expect((await run('set-role', [tag, other.user.email, 'owner'])).value.member.role).toBe('owner');
    expect((await run('remove-member', [tag, owner.user.email])).value.member).toMatchObject({ removed: true });

    const shown = await run('show', [id]);
    expect(shown.value.organization).toMatchObject({ member_count: 1, owners: [{ user_id: other.user.id }] });
    expect((await run('list', [], { q: tag })).value.organizations.map((o: { id: string }) => o.id)).toEqual([id]);
    await expect(run('list', [], { limit: '0' })).rejects.toMatchObject({ status: 400 });
    expect((await run('invite', [tag, 'someone@example.test'], { role: 'member' })).value.invitation).toMatchObject({
      email: 'someone@example.test',
      invited_by: null,
    });
    await expect(run('create', ['x'], { owner: 'nobody@example.test' })).rejects.toMatchObject({ status: 404 });
    await expect(run('create', ['x'], { owner: owner.user.email, slug: 'Bad Slug' })).rejects.toMatchObject({ status: 400 });

    await expect(run('delete', [tag])).rejects.toMatchObject({ code: 'CONFIRMATION_REQUIRED' });
    expect((await run('delete', [tag], { confirm: true })).text).toContain(`Deleted ${tag}`);
    await expect(run('show', [tag])).rejects.toMatchObject({ status: 404, code: 'ORG_NOT_FOUND' });
    expect((await eventsOf(t, 'organizations.member_added', id)).map((e) => e.details.via).sort()).toEqual(['admin', 'created']);
  });
});
