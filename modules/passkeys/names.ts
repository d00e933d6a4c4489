import { deviceParts } from '../../src/module-api.js';
import { AAGUID_NAMES } from './aaguids.js';

const KNOWN = new Map(Object.entries(AAGUID_NAMES));

/**
 * A new passkey's name when the user gives none: the authenticator's, from its AAGUID where known
 * ("iCloud Keychain"), else the browser and system of the request ("Chrome on Linux"), else "Passkey".
 */
export function defaultName(aaguid: string | null, userAgent: string | null | undefined): string {
  const known = aaguid ? KNOWN.get(aaguid.toLowerCase()) : undefined;
  if (known) return known;
  const { browser, system } = deviceParts(userAgent);
  if (browser && system && !/app$|curl|Node\.js|Python/.test(browser)) return `${browser} on ${system}`;
  return 'Passkey';
}
