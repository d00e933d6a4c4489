// ESLint (flat config) with typescript-eslint: the design's rules (docs/architecture.md, design §10).
// - No console outside the CLI's ui and the benchmarks: logs are structured (pino).
// - Import boundaries: core (src/) never imports a module (modules/); a module reaches core only
//   through the module API barrel (src/module-api.ts).
// - No unused code (variables, imports, parameters not prefixed with _).
// - No floating or misused promises in src/, modules/ and entry/ (typed rules).
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

export default tseslint.config(
  { ignores: ['dist/**', 'build/**', 'node_modules/**', 'test-results/**', 'coverage/**'] },
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
  { files: ['src/**/*.ts', 'modules/**/*.ts'], plugins: { gatehouse: { rules: { boundaries } } }, rules: { 'gatehouse/boundaries': 'error' } },
  // Rules that need types, on the code that runs in the server: a promise nobody awaits or catches
  // is a rejection nobody handles (a job tick once took the whole process down that way).
  {
    files: ['src/**/*.ts', 'modules/**/*.ts', 'entry/**/*.ts'],
    ignores: ['modules/**/*.test.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: root } },
    rules: { '@typescript-eslint/no-floating-promises': 'error', '@typescript-eslint/no-misused-promises': 'error' },
  },
  // Node scripts (release, this config): Node's globals.
  { files: ['**/*.mjs', '**/*.js'], languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly' } } },
  // The CLI's ui writes to its streams; benchmarks and release scripts print their reports.
  { files: ['src/cli/**/*.ts', 'bench/**/*.ts', 'release/**', 'test/**/*.ts', 'modules/**/*.test.ts'], rules: { 'no-console': 'off' } },
);
