import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * docs/security.md's ASVS table must not drift from the code: every id well-formed and listed once,
 * every verdict one of four words with what that verdict needs, every file, test and doc section it
 * names still there, and the summary's counts and fail list those of the table.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DOC = readFileSync(path.join(ROOT, 'docs', 'security.md'), 'utf8');
const VERDICTS = ['pass', 'n/a', 'decision', 'fail'] as const;
type Verdict = (typeof VERDICTS)[number];
/** The items of issue 59 a fail may name as its fix. */
const ISSUE_ITEMS = [
  'Step-up',
  'Two-factor that can be required',
  'Tokens in URLs',
  'Phones and codes',
  'OAuth',
  'Web',
  'Secrets',
  'Passwords',
  'Logging, files, data',
  'Decisions to write down',
];

interface Row {
  line: string;
  id: string;
  level: string;
  verdict: string;
  evidence: string;
  test: string;
}

function section(title: string): string {
  const start = DOC.indexOf(`\n## ${title}\n`);
  expect(start, `docs/security.md has a "## ${title}" section`).toBeGreaterThan(-1);
  const end = DOC.indexOf('\n## ', start + 1);
  return DOC.slice(start, end === -1 ? undefined : end);
}

const TABLE = section('The table');
const DECISIONS = section('Decisions');
const SUMMARY = section('Summary');

/** Every body row of the chapter tables (header and separator rows left out). */
function rows(): Row[] {
  return TABLE.split('\n')
    .filter((l) => l.startsWith('|') && !l.startsWith('| id ') && !l.startsWith('|---'))
    .map((line) => {
      const cells = line
        .slice(1, -1)
        .split(' | ')
        .map((c) => c.trim());
      expect(cells, `six cells in: ${line}`).toHaveLength(6);
      const [id, level, , verdict, evidence, test] = cells;
      return { line, id, level, verdict, evidence, test };
    });
}

const ROWS = rows();
const PATH_PREFIXES = ['src/', 'test/', 'modules/', 'docs/', 'templates/', 'release/'];
const ROOT_FILES = ['README.md', 'install.sh', 'package-lock.json', 'tsconfig.json'];

/** The repository paths a text names in backticks. */
function pathsIn(text: string): string[] {
  return [...text.matchAll(/`([^`\s]+)`/g)].map((m) => m[1]).filter((p) => ROOT_FILES.includes(p) || PATH_PREFIXES.some((x) => p.startsWith(x)));
}

/** The test files a text names. */
const testsIn = (text: string) => pathsIn(text).filter((p) => /\.test\.ts$/.test(p));

describe('docs/security.md, the ASVS table', () => {
  it('when its rows are read, then every id is a well-formed V1–V16 id of level 1 or 2, listed once, in order', () => {
    expect(ROWS.length).toBeGreaterThan(200);
    const ids = ROWS.map((r) => r.id);
    for (const r of ROWS) {
      expect(r.id, r.line).toMatch(/^(?:[1-9]|1[0-6])\.[1-9]\d?\.[1-9]\d?$/);
      expect(['1', '2'], r.line).toContain(r.level);
    }
    expect(
      ids.filter((id, i) => ids.indexOf(id) !== i),
      'ids listed twice',
    ).toEqual([]);
    const key = (id: string) => id.split('.').map(Number);
    const sorted = [...ids].sort((a, b) => {
      const [x, y] = [key(a), key(b)];
      return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
    });
    expect(ids).toEqual(sorted);
  });

  it('when a row gives its verdict, then it is one of pass, n/a, decision, fail, with what that verdict needs', () => {
    for (const r of ROWS) {
      expect(VERDICTS as readonly string[], r.line).toContain(r.verdict);
      expect(r.evidence.length, `evidence in: ${r.line}`).toBeGreaterThan(3);
      const verdict = r.verdict as Verdict;
      if (verdict === 'pass') expect(testsIn(r.test).length, `a pass names the test that proves it: ${r.line}`).toBeGreaterThan(0);
      if (verdict === 'n/a') expect(r.test, r.line).toBe('—');
      if (verdict === 'decision') {
        expect(r.evidence, `a decision links the Decisions section: ${r.line}`).toContain('[Decisions](#decisions)');
        expect(DECISIONS, `the Decisions section names ${r.id}`).toMatch(new RegExp(`[ (]${r.id.replace(/\./g, '\\.')}[,)]`));
      }
      if (verdict === 'fail') {
        const item = /issue 59 item "([^"]+)"/.exec(r.evidence)?.[1];
        expect(ISSUE_ITEMS, `a fail names the issue-59 item that fixes it: ${r.line}`).toContain(item);
      }
    }
  });

  it('when a row or a decision names a file, a test or a docs section, then it exists', () => {
    const missing: string[] = [];
    for (const text of [TABLE, DECISIONS]) {
      for (const p of pathsIn(text)) if (!existsSync(path.join(ROOT, p))) missing.push(p);
      for (const m of text.matchAll(/\]\(([\w-]+\.md)\)/g)) if (!existsSync(path.join(ROOT, 'docs', m[1]))) missing.push(`docs/${m[1]}`);
      // `docs/x.md` "Heading", or [x.md](x.md) "Heading", "Other heading"
      for (const m of text.matchAll(/(?:`docs\/([\w-]+\.md)`|\]\(([\w-]+\.md)\))((?:,? (?:and )?"[^"]+")+)/g)) {
        const file = path.join(ROOT, 'docs', m[1] ?? m[2]);
        if (!existsSync(file)) continue;
        const headings = readFileSync(file, 'utf8')
          .split('\n')
          .filter((l) => /^#{2,4} /.test(l))
          .map((l) => l.replace(/^#+ /, '').replace(/\s+/g, ' '));
        for (const h of m[3].matchAll(/"([^"]+)"/g)) if (!headings.includes(h[1].replace(/\s+/g, ' '))) missing.push(`${m[1] ?? m[2]} "${h[1]}"`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('when the summary counts the verdicts and lists the fails, then they are the table’s', () => {
    const count = (v: Verdict) => ROWS.filter((r) => r.verdict === v).length;
    expect(SUMMARY).toContain(`${ROWS.length} requirements`);
    expect(SUMMARY).toContain(`**${count('pass')} pass**`);
    expect(SUMMARY).toContain(`**${count('n/a')} n/a**`);
    expect(SUMMARY).toContain(`**${count('decision')} decision**`);
    expect(SUMMARY).toContain(`**${count('fail')} fail**`);
    const listed = [...SUMMARY.matchAll(/^- (\d+\.\d+\.\d+) /gm)].map((m) => m[1]);
    expect(listed).toEqual(ROWS.filter((r) => r.verdict === 'fail').map((r) => r.id));
  });
});
