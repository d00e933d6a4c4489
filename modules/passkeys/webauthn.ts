/**
 * @simplewebauthn/server, imported on the first passkey ceremony rather than when the module is
 * loaded. It and the certificate, ASN.1 and CBOR libraries under it are the largest import of the
 * whole app (about 0.2 s on an idle machine), which every process that loads the module registry
 * paid — each CLI command, `--help` included, each server start, each test file — most of them never
 * verifying a passkey. Node keeps a loaded module, so each later call is a look-up.
 */
export const webauthn = () => import('@simplewebauthn/server');

export const webauthnHelpers = () => import('@simplewebauthn/server/helpers');
