/**
 * @simplewebauthn/server, imported on the first passkey ceremony rather than when the module is
 * loaded. It and the certificate, ASN.1 and CBOR libraries under it are the largest import of the
 * whole app (about 0.25 s on an idle machine), which every process that loads the module registry
 * paid — each CLI command, `--help` included, each server start, each test file — most of them never
 * verifying a passkey. A failed import is not kept, so the next ceremony tries again.
 */
type Server = typeof import('@simplewebauthn/server');
type Helpers = typeof import('@simplewebauthn/server/helpers');

let server: Promise<Server> | null = null;
let helpers: Promise<Helpers> | null = null;

export function webauthn(): Promise<Server> {
  return (server ??= import('@simplewebauthn/server').catch((err: unknown) => {
    server = null;
    throw err;
  }));
}

export function webauthnHelpers(): Promise<Helpers> {
  return (helpers ??= import('@simplewebauthn/server/helpers').catch((err: unknown) => {
    helpers = null;
    throw err;
  }));
}
