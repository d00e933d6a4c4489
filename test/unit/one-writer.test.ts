import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isUniqueViolation } from '../../src/data/db-errors.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

function sources(...dirs: string[]): string[] {
  return dirs.flatMap((dir) =>
    readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
      .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name))),
  );
}

/** Files of `dirs` (src/, entry/ and modules/ by default) whose text matches `re`, but for `allowed`. */
function filesMatching(re: RegExp, allowed: string[], dirs = ['src', 'entry', 'modules']): string[] {
  return sources(...dirs).filter((f) => !allowed.includes(f) && re.test(readFileSync(path.join(ROOT, f), 'utf8')));
}

describe('one owner per fact', () => {
  it('when core touches auth_tokens or settings, then it goes through their repository (built once, in app-context)', () => {
    expect(
      filesMatching(/\bAuthToken\s*[.,)]/, ['src/data/models/system.models.ts', 'src/data/repositories/auth-token-repository.ts', 'src/app-context.ts']),
    ).toEqual([]);
    expect(
      filesMatching(/\bSetting\s*[.,)]/, ['src/data/models/system.models.ts', 'src/data/repositories/settings-repository.ts', 'src/app-context.ts']),
    ).toEqual([]);
    expect(filesMatching(/(?<!function )create(AuthToken|Settings)Repository\(/, ['src/app-context.ts'])).toEqual([]);
  });

  it('when a unique violation is recognised, then one helper knows every dialect; nobody else names the error', () => {
    expect(filesMatching(/UniqueConstraintError|SQLITE_CONSTRAINT|'23505'/, ['src/data/db-errors.ts'])).toEqual([]);
    expect(isUniqueViolation({ name: 'SequelizeUniqueConstraintError' })).toBe(true);
    expect(isUniqueViolation({ name: 'SequelizeDatabaseError', parent: { code: '23505' } })).toBe(true);
    expect(isUniqueViolation({ code: 'SQLITE_CONSTRAINT', message: 'SQLITE_CONSTRAINT: UNIQUE constraint failed: users.email' })).toBe(true);
    expect(isUniqueViolation({ code: 'SQLITE_CONSTRAINT', message: 'SQLITE_CONSTRAINT: FOREIGN KEY constraint failed' })).toBe(false);
    expect(isUniqueViolation({ name: 'SequelizeForeignKeyConstraintError', parent: { code: '23503' } })).toBe(false);
    expect(isUniqueViolation(null)).toBe(false);
  });

  it('when a unit of work is joined or opened, then unit-of-work.ts inTransaction does it; nobody hand-rolls `tx ? fn(tx) : transaction(fn)`', () => {
    expect(filesMatching(/\?\s*fn\((tx|t|outer)\)\s*:\s*\w+\.transaction\(/, ['src/data/unit-of-work.ts'])).toEqual([]);
  });

  it('when an email address is made canonical, then the email rule (user-columns.ts canonicalEmail) does it', () => {
    // Core only: the two-factor module's private layer is being folded into ctx.* apart from this change.
    expect(filesMatching(/email\w*(\?)?\.(trim\(\)\.)?toLowerCase\(\)/i, [], ['src', 'entry'])).toEqual([]);
  });
});
