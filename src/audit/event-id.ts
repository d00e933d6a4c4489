import { randomBytes } from 'node:crypto';

let lastMs = 0;
let seq = 0;

/**
 * A UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, then a 12-bit counter (rand_a) that keeps ids
 * made in the same millisecond by this process in order, then 62 random bits. Sorting by id is sorting
 * by time, so "newest first" and the keyset cursor need no second column.
 */
export function eventId(now: number = Date.now()): string {
  if (now > lastMs) {
    lastMs = now;
    seq = randomBytes(2).readUInt16BE(0) & 0x3ff; // leave room above the start for this millisecond
  } else {
    seq += 1;
    if (seq > 0xfff) {
      // 4096 ids in one millisecond: borrow the next one rather than break the order.
      lastMs += 1;
      seq = 0;
    }
  }
  const b = randomBytes(16);
  const ms = lastMs;
  b.writeUIntBE(ms, 0, 6);
  b[6] = 0x70 | ((seq >> 8) & 0x0f);
  b[7] = seq & 0xff;
  b[8] = 0x80 | (b[8] & 0x3f);
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The time an id was made at (its first 48 bits). */
export function eventIdTime(id: string): number {
  return parseInt(id.replace(/-/g, '').slice(0, 12), 16);
}

/** The lowest id any event made at `ms` or later can have: a keyset bound for "since this time". */
export function eventIdFloor(ms: number): string {
  const h = Math.max(0, Math.trunc(ms)).toString(16).padStart(12, '0').slice(-12);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-0000-0000-000000000000`;
}
