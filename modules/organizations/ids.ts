import { timeOrderedId } from '../../src/module-api.js';

/** A UUIDv7: ordering by id is ordering by creation, which the keyset cursors rely on. */
export const newId = (): string => timeOrderedId();

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
