import { USER_ALIASES, jsonObject, withAliases } from './aliases.js';

/**
 * A profile update (camel or snake). What it may carry depends on the installed modules' user fields,
 * so the user service parses the fields (`parseProfileInput`, with the module registry); this only
 * renames the aliases and requires an object.
 */
export const profileUpdateBody = withAliases(USER_ALIASES, jsonObject);
