import { describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain ESM script of the test command, without type declarations
import { auditVerdict, FIX_WITHIN_DAYS } from '../../scripts/dependency-audit.mjs';

const report = (counts: Record<string, number>, vulnerabilities: Record<string, { severity: string }> = {}) =>
  JSON.stringify({
    auditReportVersion: 2,
    vulnerabilities,
    metadata: { vulnerabilities: { info: 0, low: 0, moderate: 0, high: 0, critical: 0, total: 0, ...counts } },
  });

describe('the dependency policy check (scripts/dependency-audit.mjs)', () => {
  it('when a runtime dependency has a critical advisory, then the run fails and names it', () => {
    const v = auditVerdict(report({ critical: 1, high: 1 }, { 'bad-lib': { severity: 'critical' }, 'old-lib': { severity: 'high' } }));
    expect(v).toMatchObject({ fail: true });
    expect(v.lines).toEqual(['bad-lib: critical, fix before landing', `old-lib: high, fix within ${FIX_WITHIN_DAYS.high} days`]);
  });

  it('when the advisories are high or lower, then the run passes and reports them with their time to fix', () => {
    const v = auditVerdict(report({ high: 2, low: 1 }, { a: { severity: 'high' }, b: { severity: 'high' }, c: { severity: 'low' } }));
    expect(v).toMatchObject({ fail: false, counts: expect.objectContaining({ high: 2, low: 1 }) });
    expect(v.lines).toContain('c: low, fix within 90 days');
    expect(auditVerdict(report({}))).toMatchObject({ fail: false, lines: [] });
  });

  it('when the registry does not answer the audit (offline, or a mirror without the endpoint), then it says it skipped and why', () => {
    expect(auditVerdict(JSON.stringify({ message: '405 Method Not Allowed - POST https://registry.npmjs.org/-/npm/v1/security/advisories/bulk' }))).toEqual({
      skipped: expect.stringContaining('405'),
    });
    expect(auditVerdict('')).toEqual({ skipped: 'npm audit printed no report' });
  });
});
