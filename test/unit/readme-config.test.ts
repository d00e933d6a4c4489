import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { describeKeys } from '../../src/config/load-config.js';

const README = readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../README.md'), 'utf8');

/** How README shows a default: `value`, (empty) for an empty list, — for none. */
function renderDefault(d: unknown): string {
  if (d === undefined) return '—';
  if (Array.isArray(d)) return d.length ? `\`${d.join(',')}\`` : '(empty)';
  return `\`${String(d)}\``;
}

/** The row a key would get; printed when README misses it, ready to paste. */
const renderRow = (k: ReturnType<typeof describeKeys>[number]) => `| \`${k.name}\`${k.secret ? ' (secret)' : ''} | ${renderDefault(k.default)} | ${k.doc} |`;

interface Row {
  name: string;
  secret: boolean;
  default: string;
}

function configSection(): string {
  const start = README.indexOf('\n## Configuration\n');
  expect(start, 'README has a "## Configuration" section').toBeGreaterThan(-1);
  const end = README.indexOf('\n## ', start + 1);
  return README.slice(start, end === -1 ? undefined : end);
}

function tableRows(section: string): Row[] {
  const rows: Row[] = [];
  for (const line of section.split('\n')) {
    const m = /^\|\s*`([A-Z][A-Z0-9_]*)`(\s*\(secret\))?\s*\|\s*(.*?)\s*\|/.exec(line);
    if (m) rows.push({ name: m[1], secret: Boolean(m[2]), default: m[3] });
  }
  return rows;
}

describe('README configuration reference', () => {
  const keys = describeKeys();
  const rows = tableRows(configSection());

  it('when CONFIG_KEYS has a key, then the README table lists it', () => {
    const listed = new Set(rows.map((r) => r.name));
    const missing = keys.filter((k) => !listed.has(k.name));
    expect(
      missing.map((k) => k.name),
      `add to README.md:\n${missing.map(renderRow).join('\n')}`,
    ).toEqual([]);
  });

  it('when the README table lists a name, then it is a configuration key, listed once', () => {
    const known = new Set(keys.map((k) => k.name));
    expect(rows.filter((r) => !known.has(r.name)).map((r) => r.name)).toEqual([]);
    const names = rows.map((r) => r.name);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
  });

  it('when a key is a secret or has a default, then its row says so', () => {
    const byName = new Map(rows.map((r) => [r.name, r]));
    for (const k of keys) {
      const row = byName.get(k.name);
      if (!row) continue;
      expect({ name: k.name, secret: row.secret, default: row.default }).toEqual({ name: k.name, secret: k.secret, default: renderDefault(k.default) });
    }
  });

  it('when secrets are documented, then the *_FILE variant is explained', () => {
    expect(configSection()).toMatch(/NAME_FILE/);
    expect(configSection()).toMatch(/SMTP_URL_FILE=/);
  });
});
