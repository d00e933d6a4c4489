import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The import graph of the shipped code (src/, entry/, modules/; tests are outside it), built with the
 * TypeScript parser. Each edge is a value edge (it loads the file at run time) or a type edge
 * (`import type`, `import { type A }`, `export type … from`, `import('…').T` in a type). The layering
 * rules: no cycle that spans more than one folder, type edges included (a folder's files may refer to
 * each other's types), and no cycle of value edges at all (module evaluation order would decide what
 * is undefined at load time).
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const DIRS = ['src', 'entry', 'modules'];
const SKIP_DIRS = new Set(['node_modules', 'test', 'tests', '__tests__']);

interface Edge {
  to: string;
  type: boolean;
}
type Graph = Map<string, Edge[]>;

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (!SKIP_DIRS.has(e.name)) sourceFiles(p, out);
    } else if (/\.(ts|mts)$/.test(e.name) && !/\.(test|spec)\.ts$/.test(e.name) && !e.name.endsWith('.d.ts')) {
      out.push(path.relative(ROOT, p).split(path.sep).join('/'));
    }
  }
  return out;
}

/** The relative imports of one file, each marked value or type. */
function importsOf(fileName: string, text: string): { spec: string; type: boolean }[] {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: { spec: string; type: boolean }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const bindings = clause?.namedBindings;
      // No clause (`import './x'`) loads the file; a default or namespace import is a value.
      const type =
        !!clause &&
        (clause.isTypeOnly ||
          (!clause.name && !!bindings && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((el) => el.isTypeOnly)));
      found.push({ spec: node.moduleSpecifier.text, type });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.exportClause;
      const type = node.isTypeOnly || (!!clause && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((el) => el.isTypeOnly));
      found.push({ spec: node.moduleSpecifier.text, type });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteralLike(arg)) found.push({ spec: arg.text, type: false });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push({ spec: node.argument.literal.text, type: true });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found.filter((f) => f.spec.startsWith('.'));
}

function resolveImport(from: string, spec: string, known: Set<string>): string | null {
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec));
  for (const c of [base.replace(/\.js$/, '.ts'), base.replace(/\.mjs$/, '.mts'), `${base}.ts`, `${base}/index.ts`, base]) if (known.has(c)) return c;
  return null;
}

function buildGraph(): Graph {
  const files = DIRS.flatMap((d) => sourceFiles(path.join(ROOT, d)));
  const known = new Set(files);
  const graph: Graph = new Map();
  for (const f of files) {
    const edges: Edge[] = [];
    for (const { spec, type } of importsOf(f, readFileSync(path.join(ROOT, f), 'utf8'))) {
      const to = resolveImport(f, spec, known);
      if (to) edges.push({ to, type });
    }
    graph.set(f, edges);
  }
  return graph;
}

/** Strongly connected components of more than one file (Tarjan), over every edge or value edges only. */
function cycles(graph: Graph, valueOnly: boolean): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const out: string[][] = [];
  const strong = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const { to, type } of graph.get(v) ?? []) {
      if (valueOnly && type) continue;
      if (!index.has(to)) {
        strong(to);
        low.set(v, Math.min(low.get(v)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(v, Math.min(low.get(v)!, index.get(to)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) out.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) strong(v);
  return out;
}

const folders = (component: string[]) => new Set(component.map((f) => path.posix.dirname(f)));
const describeCycle = (component: string[]) => `${component.length} files over ${folders(component).size} folders: ${component.join(', ')}`;

describe('the import graph of src/, entry/ and modules/', () => {
  const graph = buildGraph();

  it('covers the shipped code, tests left out, with value and type edges', () => {
    expect(graph.size).toBeGreaterThan(200);
    expect([...graph.keys()].some((f) => f.endsWith('.test.ts'))).toBe(false);
    const fromBuilder = graph.get('src/app-context.ts') ?? [];
    expect(fromBuilder.some((e) => e.to === 'src/modules/hub/module-runtime.ts' && !e.type)).toBe(true);
    expect(fromBuilder.some((e) => e.to === 'src/config/schema.ts' && e.type)).toBe(true);
  });

  it('has no cycle that spans more than one folder (type imports included)', () => {
    const crossing = cycles(graph, false).filter((c) => folders(c).size > 1);
    expect(crossing.map(describeCycle), 'import cycles across folders').toEqual([]);
  });

  it('has no cycle of value imports at all', () => {
    expect(cycles(graph, true).map(describeCycle), 'value import cycles').toEqual([]);
  });

  it('reaches the OpenID provider (src/oidc) only from above it: the builder, the HTTP root and route table, the CLI', () => {
    // What the layers below need of it (grants ending with sessions, its limit classes, its acr values,
    // its expired artefacts) goes through the event table (src/app-events.ts), create-app.ts and ports.
    const into = [...graph]
      .filter(([from, edges]) => !from.startsWith('src/oidc/') && edges.some((e) => e.to.startsWith('src/oidc/')))
      .map(([from]) => from)
      .sort();
    expect(into).toEqual(['src/app-services.ts', 'src/cli/checks/oidc.ts', 'src/cli/commands/oidc.ts', 'src/http/create-app.ts', 'src/http/routes/index.ts']);
  });
});

describe('the cycle finder', () => {
  const g = (edges: [string, string, boolean?][]): Graph => {
    const graph: Graph = new Map();
    for (const [from, to, type] of edges) {
      graph.set(from, [...(graph.get(from) ?? []), { to, type: Boolean(type) }]);
      if (!graph.has(to)) graph.set(to, []);
    }
    return graph;
  };

  it('finds a cycle across folders, and a value cycle only where every edge is a value', () => {
    const graph = g([
      ['src/a.ts', 'src/http/b.ts'],
      ['src/http/b.ts', 'src/a.ts', true],
      ['src/x/c.ts', 'src/x/d.ts'],
      ['src/x/d.ts', 'src/x/c.ts'],
      ['src/y.ts', 'src/a.ts'],
    ]);
    expect(cycles(graph, false).map(describeCycle)).toEqual([
      '2 files over 2 folders: src/a.ts, src/http/b.ts',
      '2 files over 1 folders: src/x/c.ts, src/x/d.ts',
    ]);
    expect(cycles(graph, true).map(describeCycle)).toEqual(['2 files over 1 folders: src/x/c.ts, src/x/d.ts']);
  });

  it('reads type-only imports and exports as type edges, everything else as values', () => {
    const found = importsOf(
      'x.ts',
      [
        "import type { A } from './a.js';",
        "import { type B, type C } from './b.js';",
        "import { type D, e } from './d.js';",
        "import f from './f.js';",
        "import './side-effect.js';",
        "export type { G } from './g.js';",
        "export { h } from './h.js';",
        "export * from './star.js';",
        "const lazy = () => import('./lazy.js');",
        "let t: import('./typeref.js').T;",
        "import express from 'express';",
      ].join('\n'),
    );
    expect(found).toEqual([
      { spec: './a.js', type: true },
      { spec: './b.js', type: true },
      { spec: './d.js', type: false },
      { spec: './f.js', type: false },
      { spec: './side-effect.js', type: false },
      { spec: './g.js', type: true },
      { spec: './h.js', type: false },
      { spec: './star.js', type: false },
      { spec: './lazy.js', type: false },
      { spec: './typeref.js', type: true },
    ]);
  });
});
