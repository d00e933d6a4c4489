import { runCli } from './create-cli.js';
import type { CliRuntime } from './context.js';

// The CLI entry (bin/gatehouse imports this file): the only place that calls process.exit.
const rt: CliRuntime = {
  streams: { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin },
  exitCode: 0,
};
const code = await runCli(process.argv, rt);
process.exit(code);
