import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** What every benchmark entry shares: env figures, stdout for results, stderr for progress, results file, exit codes. */

/** A positive number from the environment, or the default. */
export const envNumber = (v: string | undefined, d: number) => (v && Number.isFinite(Number(v)) && Number(v) > 0 ? Number(v) : d);

export const out = (s = '') => process.stdout.write(`${s}\n`);
export const note = (s: string) => process.stderr.write(`· ${s}\n`);

/** A plain-text table: columns padded to their widest cell, a dashed rule under the head. */
export function table(head: string[], body: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}

/** Writes a run's results as JSON (bench/results/…) and says where, relative to `root`. */
export function writeResults(root: string, file: string, result: { runSeconds: number }): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  note(`results written to ${path.relative(root, file)} (${result.runSeconds} s)`);
}

/** Runs a benchmark: its code is the exit code (0 goals met, 1 missed); a harness failure exits 2. */
export function runBenchmark(name: string, main: () => Promise<number>): void {
  main().then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`${name} failed: ${(err as Error).stack ?? err}\n`);
      process.exit(2);
    },
  );
}
