import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CLI_SCOPE, currentAuditScope, outsideAuditScope, type AuditScope } from '../../src/audit/audit-scope.js';
import { commands } from '../../src/cli/commands/index.js';
import type { CommandRegistrar } from '../../src/cli/context.js';
import { runCli } from '../../src/cli/create-cli.js';

describe('the CLI audit scope', () => {
  it('when any command runs, then what it writes has the actor { via: cli }, after awaits too; a server it starts leaves the scope', async () => {
    const seen: Record<string, AuditScope | null> = {};
    const probe: CommandRegistrar = (program) => {
      program.command('audit-probe').action(async () => {
        seen.start = currentAuditScope();
        await new Promise((r) => setTimeout(r, 5));
        seen.afterAwait = currentAuditScope();
        // As `gatehouse serve` does: timers and requests made inside belong to no CLI action.
        await outsideAuditScope(async () => {
          seen.outside = currentAuditScope();
          await new Promise<void>((r) =>
            setTimeout(() => {
              seen.outsideTimer = currentAuditScope();
              r();
            }, 5),
          );
        });
      });
    };
    commands.push(probe);
    try {
      const streams = { stdout: new PassThrough(), stderr: new PassThrough(), stdin: new PassThrough() };
      const code = await runCli(['node', 'gatehouse', 'audit-probe'], { streams: streams as never, exitCode: 0, modules: [] });
      expect(code).toBe(0);
    } finally {
      commands.splice(commands.indexOf(probe), 1);
    }
    expect(seen.start).toBe(CLI_SCOPE);
    expect(seen.start?.actor).toEqual({ via: 'cli' });
    expect(seen.afterAwait).toBe(CLI_SCOPE);
    expect(seen.outside).toBeNull();
    expect(seen.outsideTimer).toBeNull();
    expect(currentAuditScope()).toBeNull();
  });
});
