import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineRoute } from '../../src/module-api.js';
import { defineModule, ModuleManifestError, type ModuleInput } from '../../src/modules/define-module.js';
import { checkRegistry, compareVersions } from '../../src/modules/registry.js';
import { registry } from '../../modules/index.js';
import { createTable, testModule } from './module-helpers.js';

const minimal = (over: Record<string, unknown> = {}) =>
  ({
    id: 'test-min',
    version: '1.0.0',
    description: 'minimal',
    requires: [],
    config: null,
    migrations: [],
    routes: [],
    hooks: [],
    jobs: [],
    emails: [],
    userFields: [],
    commands: [],
    ...over,
  }) as unknown as ModuleInput;

function problemsOf(input: ModuleInput): string[] {
  try {
    defineModule(input);
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(ModuleManifestError);
    return (err as ModuleManifestError).problems;
  }
}

const CORE = { routes: [{ method: 'get', path: '/health' }], userColumns: ['email'], jobs: ['session-expiry'] };

describe('module manifests', () => {
  it('when a manifest is complete, then defineModule returns it with user fields stamped with the module id', () => {
    const m = defineModule(minimal({ userFields: [{ name: 'test_flag', type: 'boolean' }] }));
    expect(m.userFields).toEqual([{ name: 'test_flag', type: 'boolean', module: 'test-min' }]);
    expect(m.exporters).toEqual([]);
    expect(Object.isFrozen(m)).toBe(true);
  });

  it('when a manifest has an unknown key or misses a required one, then it is refused naming the key', () => {
    expect(problemsOf(minimal({ extra: 1 })).join()).toMatch(/extra/);
    const { version: _version, ...noVersion } = minimal() as unknown as Record<string, unknown>;
    expect(problemsOf(noVersion as unknown as ModuleInput).join()).toMatch(/version/);
    expect(problemsOf(minimal({ userFields: [{ name: 'x_y', type: 'string', secret: true }] })).join()).toMatch(/secret/);
  });

  it("when a manifest's web key puts a page outside its place or has no handler, then each problem is listed", () => {
    const handler = async () => undefined;
    const problems = problemsOf(
      minimal({
        web: {
          console: [{ method: 'get', path: '/account/x', handler }],
          account: [{ id: 'sec', order: 1, title: 'test-min.t', template: 'sec', load: async () => null, posts: [{ path: '/admin/x', handler }] }],
          userPanels: [{ id: 'p', order: 1, template: 'p', load: async () => null, posts: [{ path: '/account/y', handler: 'nope' as never }] }],
        },
      }),
    ).join('\n');
    expect(problems).toMatch(/web\.console\.0\.path: must be under \/admin\//);
    expect(problems).toMatch(/web\.account\.0\.posts\.0\.path: must be under \/account\//);
    expect(problems).toMatch(/web\.userPanels\.0\.posts\.0\.path: must be under \/admin\/users\/:id\//);
    expect(problems).toMatch(/web\.userPanels\.0\.posts\.0\.handler: must be a function/);
    expect(defineModule(minimal({ web: { console: [{ method: 'get', path: '/admin/x', handler }] } })).web?.console).toHaveLength(1);
  });

  it('when empty contributions are left out, then the manifest has them empty', () => {
    const { jobs: _j, hooks: _h, commands: _c, emails: _e, ...lean } = minimal() as unknown as Record<string, unknown>;
    const m = defineModule(lean as unknown as ModuleInput);
    expect(m).toMatchObject({ jobs: [], hooks: [], commands: [], emails: [], rateLimits: [], errorCodes: [], doctorChecks: [], profileRefusals: [] });
  });

  it('when fields have bad values, then each problem is listed', () => {
    const problems = problemsOf(
      minimal({
        id: 'Bad_Id',
        version: '1.0',
        jobs: [{ name: 'j', schedule: 'every minute', run: async () => '' }],
        userFields: [{ name: 'Drop Table', type: 'string' }],
      }),
    );
    expect(problems.join('\n')).toMatch(/^id:/m);
    expect(problems.join('\n')).toMatch(/^version:/m);
    expect(problems.join('\n')).toMatch(/jobs\.0\.schedule: must be a cron expression/);
    expect(problems.join('\n')).toMatch(/userFields\.0\.name/);
  });

  it('when routes, migrations, commands or config are inconsistent, then the manifest is refused', () => {
    const foreign = defineRoute({ method: 'get', path: '/x', auth: 'public', module: 'other', handler: () => ({}) });
    const m = createTable('20261121-0001-a', 'test_a');
    const problems = problemsOf(
      minimal({
        routes: [foreign],
        migrations: [m, m],
        requires: ['test-min'],
        commands: [{ name: 'other:run', description: 'x', run: async () => null }],
        config: z.object({ needed: z.string() }),
      }),
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        "route GET /x: must be declared with module: 'test-min'",
        'migration 20261121-0001-a is declared twice',
        'a module cannot require itself',
        'command other:run must start with test-min:',
        'config: every setting needs a default',
      ]),
    );
  });

  it("when a module declares audit events outside its own family, twice, or one of core's, then the manifest is refused", () => {
    const foreign = problemsOf(minimal({ auditEvents: [{ type: 'other.thing_happened', description: 'x' }] }));
    expect(foreign).toContain('audit event other.thing_happened must start with test-min.');
    const twice = problemsOf(
      minimal({
        auditEvents: [
          { type: 'test-min.done', description: 'x' },
          { type: 'test-min.done', description: 'y' },
        ],
      }),
    );
    expect(twice).toContain('audit event test-min.done is declared twice');
    // A module whose id is a core family cannot pass off core's own types (they would mail the user).
    const core = problemsOf(minimal({ id: 'password', auditEvents: [{ type: 'password.reset', description: 'x' }] }));
    expect(core).toContain("audit event password.reset is one of core's");
  });

  it('when the shipped registry is checked against core, then it has no conflicts', () => {
    const r = checkRegistry(registry, CORE);
    expect([...r.problems.entries()]).toEqual([]);
    expect(r.ordered.map((m) => m.id)).toEqual(['ext-business', 'onboarding', 'privacy', 'two-factor', 'blog', 'post-types', 'passkeys', 'organizations']);
  });
});

describe('the registry check', () => {
  it('when modules depend on each other, then they are ordered after their requirements and cycles are reported', () => {
    const a = testModule('test-a', { requires: ['test-b'] });
    const b = testModule('test-b');
    const c1 = testModule('test-c1', { requires: ['test-c2'] });
    const c2 = testModule('test-c2', { requires: ['test-c1'] });
    const d = testModule('test-d', { requires: ['test-missing'] });
    const e = testModule('test-e', { requires: ['test-c1'] });
    const r = checkRegistry([a, b, c1, c2, d, e], CORE);
    const order = r.ordered.map((m) => m.id);
    expect(order.indexOf('test-b')).toBeLessThan(order.indexOf('test-a'));
    expect(r.problems.get('test-c1')?.[0]).toMatchObject({ code: 'MODULE_DEPENDENCY_ERROR', message: expect.stringMatching(/cycle/) });
    expect(r.problems.get('test-d')?.[0].message).toBe('requires test-missing, which is not in the registry');
    expect(r.problems.get('test-e')?.[0].message).toBe('requires test-c1, which cannot be installed');
    expect(r.problems.has('test-a')).toBe(false);
  });

  it('when two modules claim the same route, table, user field, job or command, then both are flagged', () => {
    const job = { name: 'test-job', schedule: '* * * * *', run: async () => '' };
    const one = testModule('test-one', {
      routes: [defineRoute({ method: 'post', path: '/api/v1/shared/:id', auth: 'public', module: 'test-one', handler: () => ({}) })],
      tables: ['test_shared'],
      userFields: [{ name: 'test_col', type: 'string' }],
      jobs: [job],
      commands: [{ name: 'test-one:go', description: 'go', run: async () => null }],
    });
    const two = testModule('test-two', {
      routes: [defineRoute({ method: 'post', path: '/API/v1/shared/:other/', auth: 'public', module: 'test-two', handler: () => ({}) })],
      tables: ['test_shared'],
      userFields: [
        { name: 'test_col', type: 'string' },
        { name: 'email', type: 'string' },
      ],
      jobs: [job, { ...job, name: 'session-expiry' }],
    });
    const r = checkRegistry([one, two], CORE);
    const messages = (id: string) => (r.problems.get(id) ?? []).map((p) => p.message);
    expect(messages('test-one')).toEqual(
      expect.arrayContaining([
        'route POST /api/v1/shared/: conflicts with module test-two',
        'table test_shared conflicts with module test-two',
        'user field test_col conflicts with module test-two',
        'job test-job conflicts with module test-two',
      ]),
    );
    expect(messages('test-two')).toEqual(expect.arrayContaining(['user field email conflicts with core', 'job session-expiry conflicts with core']));
    const cmd = checkRegistry([one], { ...CORE, commands: ['test-one:go'] });
    expect(cmd.problems.get('test-one')?.[0].message).toBe('command test-one:go conflicts with core');
  });

  it('when versions are compared, then they compare numerically', () => {
    expect(compareVersions('1.10.0', '1.9.9')).toBeGreaterThan(0);
    expect(compareVersions('1.0.0', '1.0.0')).toBe(0);
    expect(compareVersions('0.9.0', '1.0.0')).toBeLessThan(0);
  });
});
