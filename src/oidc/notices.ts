/**
 * oidc-provider writes its NOTICE and WARNING lines with console.info and console.warn (its
 * helpers/attention.js), plain text on stdout and stderr beside Gatehouse's JSON log. Those lines, and
 * only those, are handed to the logger instead; everything else still reaches the console as written.
 * Installed once per process (the provider is rebuilt when keys change); the newest sink receives them.
 */
const PREFIX = /^(?:\x1b\[[0-9;]*m)?oidc-provider (NOTICE|WARNING): ([\s\S]*?)(?:\x1b\[0m)?$/;

let sink: ((level: 'info' | 'warn', message: string) => void) | null = null;
let installed = false;

export function routeProviderNotices(to: (level: 'info' | 'warn', message: string) => void): void {
  sink = to;
  if (installed) return;
  installed = true;
  // The one place that takes the library's console lines into the log.
  const target = console;
  for (const method of ['info', 'warn'] as const) {
    const original = target[method].bind(target);
    target[method] = (...args: unknown[]) => {
      const m = args.length === 1 && typeof args[0] === 'string' ? PREFIX.exec(args[0]) : null;
      if (m && sink) sink(m[1] === 'NOTICE' ? 'info' : 'warn', m[2]);
      else original(...args);
    };
  }
}
