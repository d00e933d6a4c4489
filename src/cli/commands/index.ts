import type { CommandRegistrar } from '../context.js';
import { registerAudit } from './audit.js';
import { registerBackup } from './backup.js';
import { registerDoctor } from './doctor.js';
import { registerInit } from './init.js';
import { registerLimits } from './limits.js';
import { registerMail } from './mail.js';
import { registerMigrate } from './migrate.js';
import { registerModuleCommands } from './module.js';
import { registerServe } from './serve.js';
import { registerSessions } from './sessions.js';
import { registerUpgrade } from './upgrade.js';
import { registerUser } from './user.js';
import { registerVersion } from './version.js';
import { registerWebhook } from './webhook.js';
import { registerOidc } from './oidc.js';

/**
 * Every top-level command, one line each, in the order `gatehouse --help` lists them. A registrar
 * adds its command with `program.command(...)`. The app context (database, HTTP) is imported only
 * when a command opens it (context.ts openApp), so --help and --version stay fast.
 */
export const commands: CommandRegistrar[] = [
  registerInit,
  registerServe,
  registerMigrate,
  registerUser,
  registerDoctor,
  registerSessions,
  registerAudit,
  registerLimits,
  registerBackup,
  registerUpgrade,
  registerMail,
  registerModuleCommands,
  registerWebhook,
  registerOidc,
  registerVersion,
];
