// ESLint (flat config) with typescript-eslint: the design's rules (docs/architecture.md, design §10).
// - No console outside the CLI's ui and the benchmarks: logs are structured (pino).
// - Import boundaries: core (src/) never imports a module (modules/); a module reaches core only
//   through the module API barrel (src/module-api.ts).
// - No unused code (variables, imports, parameters not prefixed with _).
// - Typed rules in src/, modules/ and entry/: no floating or misused promises, no assertion the types
//   already make (a `!` on a narrowed `auth.user`), every switch over a union exhaustive, and `any`
//   only where an eslint-disable comment says why (`-- reason`, required by gatehouse/disable-reason).
// Formatting is Prettier's (.prettierrc.json), checked apart (npm run format:check).
import js from '@eslint/js';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import tseslint from 'typescript-eslint';

const root = path.dirname(fileURLToPath(import.meta.url));
const inside = (file, dir) => !path.relative(dir, file).startsWith('..') && !path.isAbsolute(path.relative(dir, file));

/**
 * The module boundary, on resolved paths (src/modules/ is core; modules/ holds the modules):
 * core (src/) never imports a module, and a module reaches core only through src/module-api.ts.
 */
const boundaries = {
  meta: { type: 'problem', schema: [], messages: { coreImportsModule: '{{what}}', moduleImportsCore: '{{what}}' } },
  create(context) {
    const file = context.filename;
    const isCore = inside(file, path.join(root, 'src'));
    const isModule = inside(file, path.join(root, 'modules'));
    if (!isCore && !isModule) return {};
    const check = (node, source) => {
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const target = path.resolve(path.dirname(file), source);
      if (isCore && inside(target, path.join(root, 'modules'))) {
        context.report({
          node,
          messageId: 'coreImportsModule',
          data: { what: 'Core never imports a module: the registry is passed in at the composition root (entry/).' },
        });
      }
      const barrel = path.join(root, 'src', 'module-api');
      if (isModule && inside(target, path.join(root, 'src')) && target.replace(/\.[jt]s$/, '') !== barrel) {
        context.report({
          node,
          messageId: 'moduleImportsCore',
          data: { what: 'A module reaches core only through src/module-api.ts (its ModuleContext and the types it exports).' },
        });
      }
    };
    return {
      ImportDeclaration: (node) => check(node, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node, node.source.value),
      ExportAllDeclaration: (node) => check(node, node.source.value),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value),
    };
  },
};

/** An eslint-disable comment says why after `--` (the one place an `any` or another exception is explained). */
const disableReason = {
  meta: { type: 'suggestion', schema: [], messages: { why: 'Say why after `--` in an eslint-disable comment.' } },
  create(context) {
    return {
      Program() {
        for (const c of context.sourceCode.getAllComments()) {
          if (/^\s*eslint-disable/.test(c.value) && !/\s--\s*\S/.test(c.value)) context.report({ loc: c.loc, messageId: 'why' });
        }
      },
    };
  },
};

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'build/**',
      'node_modules/**',
      'test-results/**',
      'coverage/**',
      'templates/web/assets/simplewebauthn-browser.js' /* vendored: the @simplewebauthn/browser bundle, byte for byte */,
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module' },
    rules: {
      'no-console': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      // Manifests and route tables are heterogeneous by design; `any` is confined to their element types.
      '@typescript-eslint/no-explicit-any': 'off',
      // Control characters are matched on purpose (input validation).
      'no-control-regex': 'off',
    },
  },
  {
    files: ['src/**/*.ts', 'modules/**/*.ts', 'entry/**/*.ts'],
    plugins: { gatehouse: { rules: { boundaries, 'disable-reason': disableReason } } },
    rules: { 'gatehouse/boundaries': 'error', 'gatehouse/disable-reason': 'error' },
  },
  // Rules that need types, on the code that runs in the server: a promise nobody awaits or catches
  // is a rejection nobody handles (a job tick once took the whole process down that way).
  {
    files: ['src/**/*.ts', 'modules/**/*.ts', 'entry/**/*.ts'],
    ignores: ['modules/**/*.test.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: root } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
    },
  },
  // A module's SQL goes through ctx.db (select/exec, checked by a parser) or its own models: never raw
  // fragments inside a model call (literal, fn, col, where), nor the Sequelize instance a model or a
  // transaction carries (`.sequelize`), which would reach every table unchecked.
  {
    files: ['modules/**/*.ts'],
    ignores: ['modules/**/*.test.ts', 'modules/*/test/**', 'modules/*/migrations/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'sequelize',
              importNames: ['literal', 'fn', 'col', 'where', 'cast', 'Sequelize'],
              message: 'Raw SQL fragments bypass the module SQL check: use ctx.db.select / exec.',
            },
          ],
        },
      ],
      'no-restricted-properties': [
        'error',
        { property: 'sequelize', message: "A model's or transaction's Sequelize instance reaches every table: use ctx.db." },
      ],
    },
  },
  // The server's code says why wherever it keeps an `any` (tests and their kits may use it freely).
  {
    files: ['src/**/*.ts', 'modules/**/*.ts', 'entry/**/*.ts'],
    ignores: ['modules/**/*.test.ts', 'modules/*/test/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'error' },
  },
  // Node scripts (release, this config): Node's globals.
  { files: ['**/*.mjs', '**/*.js'], languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly' } } },
  // The hosted pages' script (src/web): a browser's globals, a classic script (no modules, no Node).
  {
    files: ['templates/web/assets/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: Object.fromEntries(
        [
          'window',
          'document',
          'navigator',
          'fetch',
          'atob',
          'btoa',
          'AbortController',
          'PublicKeyCredential',
          'setTimeout',
          'clearTimeout',
          'history',
          'URLSearchParams',
          'FormData',
        ].map((g) => [g, 'readonly']),
      ),
    },
  },
  // The CLI's ui writes to its streams; benchmarks and release scripts print their reports.
  { files: ['src/cli/**/*.ts', 'bench/**/*.ts', 'release/**', 'test/**/*.ts', 'modules/**/*.test.ts'], rules: { 'no-console': 'off' } },
);
