import { runCli } from './create-cli.js';
import type { CliRuntime } from './context.js';
import type { ModuleManifest } from '../modules/define-module.js';

/**
 * Runs the CLI on this process's argv and exits with its code: the only place that calls process.exit.
 * `registry` is the modules that can be installed, given by the composition root (entry/cli.ts).
 */
export async function main(registry: readonly ModuleManifest[]): Promise<never> {
  const rt: CliRuntime = {
    streams: { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin },
    exitCode: 0,
    modules: registry,
  };
  // A reader that goes away early (`gatehouse doctor | head -1`) is not an error: stop quietly, with
  // the exit code the command has so far, instead of a stack trace about EPIPE.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(rt.exitCode);
      throw err;
    });
  }
  const code = await runCli(process.argv, rt);
  process.exit(code);
}
