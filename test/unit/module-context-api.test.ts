import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { defineModule, type ModuleContext, type ModuleSessions } from '../../src/module-api.js';
import { createModuleContext } from '../../src/modules/module-context.js';
import { moduleContextMembers, type ContextMember } from '../helpers/module-context-members.js';

let members: ContextMember[];
beforeAll(() => {
  members = moduleContextMembers();
}, 120_000);

/** Member names in the first column of docs/architecture.md's ModuleContext table: `users.find / findMany` is two. */
function documentedMembers(): string[] {
  const doc = readFileSync('docs/architecture.md', 'utf8');
  const section = doc.slice(doc.indexOf('### ModuleContext'), doc.indexOf('\n## ', doc.indexOf('### ModuleContext')));
  const rows = section.split('\n').filter((l) => l.startsWith('| `'));
  const names: string[] = [];
  for (const row of rows) {
    const first = row.split('|')[1] ?? '';
    for (const [, span] of first.matchAll(/`([^`]+)`/g)) {
      // Drop arguments and type parameters, then `a.b / c` names a.b and a.c.
      let bare = span!;
      for (let prev = ''; prev !== bare;) [prev, bare] = [bare, bare.replace(/\([^()]*\)|<[^<>]*>/g, '')];
      const [head, ...rest] = bare.split('/').map((s) => s.trim());
      const prefix = head!.includes('.') ? head!.slice(0, head!.lastIndexOf('.') + 1) : '';
      names.push(head!, ...rest.map((r) => prefix + r));
    }
  }
  return names;
}

describe('the ModuleContext table in docs/architecture.md', () => {
  it('names every member of the ModuleContext type, nested ones included, and nothing else', () => {
    const documented = documentedMembers();
    expect(new Set(documented).size, 'a member is documented twice').toBe(documented.length);
    expect([...documented].sort()).toEqual(members.map((m) => m.name).sort());
  });
});

describe('no member of the module context opens a full session but the sign-in seam and activate', () => {
  it('types: only signIn and sessions.activate answer a session; sessions.create is gone', () => {
    // What a member answers (the type after its last arrow): a session, a sign-in result or a token.
    const answers = (m: ContextMember) => m.type.slice(m.type.lastIndexOf('=>'));
    const opening = members.filter((m) => m.callable && /\bSessionRecord\b|\bSignInResult\b|\btoken: string/.test(answers(m))).map((m) => m.name);
    expect(opening.sort()).toEqual(['sessions.activate', 'signIn']);
    expectTypeOf<ModuleSessions>().not.toHaveProperty('create');
    expectTypeOf<ModuleContext>().not.toHaveProperty('createSession');
    // @ts-expect-error there is no way to open a session directly
    const create = (ctx: ModuleContext): unknown => ctx.sessions.create;
    void create;
  });

  it('runtime: calling every member reaches the session-opening services only from signIn and sessions.activate', async () => {
    // A stand-in app that records every path the context reaches (`services.sessions.create`, …).
    const reached: string[] = [];
    const fake = (at: string): unknown =>
      new Proxy(function () {}, {
        get: (_t, key) => (typeof key === 'symbol' || key === 'then' ? undefined : fake(at ? `${at}.${key}` : key)),
        apply: (_t, _this, _args) => {
          reached.push(at);
          return fake(`${at}()`);
        },
      });
    // A second-factor provider (the only kind of module that may call sessions.activate).
    const manifest = defineModule({
      id: 'probe',
      version: '1.0.0',
      description: 'probe',
      hooks: [{ event: 'auth.two_factor.methods', handler: () => undefined }],
    });
    const ctx = createModuleContext(fake('') as AppContext, manifest);
    const user = { id: 'u1', two_factor: true, password_hash: 'x' };
    const opening = /^(services\.(sessions\.(create|activate)|signIn|auth|tokenLogin)|repos\.sessions)\b/;
    const byMember = new Map<string, string[]>();
    for (const m of members.filter((x) => x.callable)) {
      const [group, fn] = m.name.includes('.') ? m.name.split('.') : [undefined, m.name];
      const target = (group ? (ctx as unknown as Record<string, Record<string, unknown>>)[group] : ctx) as Record<string, unknown>;
      expect(typeof target[fn!], m.name).toBe('function');
      reached.length = 0;
      try {
        // activate(sessionId, { user, method }); every other member gets the user first.
        const args = m.name === 'sessions.activate' ? ['s1', { user, method: 'password' }] : [user, 'password', { user, method: 'password' }];
        await (target[fn!] as (...a: unknown[]) => unknown)(...args);
      } catch {
        // A stand-in answers nonsense; only what was reached matters.
      }
      byMember.set(
        m.name,
        reached.filter((p) => opening.test(p)),
      );
    }
    const openers = [...byMember].filter(([, paths]) => paths.length).map(([name]) => name);
    expect(openers.sort()).toEqual(['sessions.activate', 'signIn']);
    expect(byMember.get('signIn')).toEqual(['services.signIn.signIn']);
    expect(byMember.get('sessions.activate')).toEqual(['services.signIn.completePending']);
    expect('create' in ctx.sessions).toBe(false);
  });
});
