import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CORE_AUDIT_TYPES, OWN_SECURITY_FAMILIES } from '../../src/audit/event-types.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DOC = readFileSync(path.join(ROOT, 'docs', 'audit.md'), 'utf8');

/** The rows of the "Core event types" table: the first cell of each. */
function catalogue(): string[] {
  const start = DOC.indexOf('\n## Core event types\n');
  expect(start, 'docs/audit.md has a "## Core event types" section').toBeGreaterThan(-1);
  const end = DOC.indexOf('\n## ', start + 1);
  return [...DOC.slice(start, end).matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]);
}

describe('docs/audit.md', () => {
  it('when compared with CORE_AUDIT_TYPES, then its catalogue lists every core type once, and nothing else', () => {
    const listed = catalogue();
    expect(new Set(listed).size, 'no type listed twice').toBe(listed.length);
    expect([...listed].sort()).toEqual(Object.keys(CORE_AUDIT_TYPES).sort());
  });

  it('when it describes what a user sees of themselves, then it names every family of OWN_SECURITY_FAMILIES', () => {
    for (const f of OWN_SECURITY_FAMILIES) expect(DOC).toContain(`\`${f.endsWith('.') ? `${f}*` : f}\``);
  });

  it('when README and the architecture guide link the docs, then docs/audit.md is among them', () => {
    expect(readFileSync(path.join(ROOT, 'README.md'), 'utf8')).toContain('docs/audit.md');
    expect(readFileSync(path.join(ROOT, 'docs', 'architecture.md'), 'utf8')).toContain('(audit.md)');
  });
});
