import type { ModuleManifest } from '../src/module-api.js';
import extBusiness from './ext-business/index.js';
import onboarding from './onboarding/index.js';
import privacy from './privacy/index.js';
import blog from './blog/index.js';
import twoFactor from './two-factor/index.js';
import postTypes from './post-types/index.js';
import passkeys from './passkeys/index.js';
import organizations from './organizations/index.js';

/**
 * The registry: every module shipped with Gatehouse. Listed here (not found by scanning the folder)
 * so the same imports work from the TypeScript sources and from the compiled dist/.
 */
export const registry: readonly ModuleManifest[] = [extBusiness, onboarding, privacy, twoFactor, blog, postTypes, passkeys, organizations];
