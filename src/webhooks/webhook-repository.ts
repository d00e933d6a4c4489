import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { EndpointRow, MessageStatus, WebhookDelivery, WebhookMessage } from './webhook-types.js';

/** The one reader and writer of webhook_endpoints, webhook_messages and webhook_deliveries. */

interface TxOption {
  tx?: Transaction | null;
}

function iso(v: Date | string): string;
function iso(v: Date | string | null): string | null;
function iso(v: Date | string | null): string | null {
  return v === null ? null : (v instanceof Date ? v : new Date(v)).toISOString();
}
const bool = (v: unknown) => v === true || v === 1 || v === '1' || v === 't';

type RawEndpoint = Omit<EndpointRow, 'events' | 'created_at' | 'failing_since' | 'previous_secret_expires_at' | 'enabled' | 'include_ip_user_agent'> & {
  events: string;
  created_at: Date | string;
  failing_since: Date | string | null;
  previous_secret_expires_at: Date | string | null;
  enabled: unknown;
  include_ip_user_agent: unknown;
};

const ENDPOINT_COLUMNS =
  'id, url, description, events, secret_sealed, previous_secret_sealed, previous_secret_expires_at, include_ip_user_agent, enabled, disabled_reason, created_at, failing_since';
/** What is read: the written columns and the kind (an operator's endpoint is `webhook`, the column's default). */
const READ_COLUMNS = `${ENDPOINT_COLUMNS}, kind`;
/** The operator's endpoints only: core's own deliveries (an OpenID client's back-channel logout URI) are never listed or matched to events. */
const OPERATORS = "kind = 'webhook'";

function toEndpoint(r: RawEndpoint): EndpointRow {
  return {
    ...r,
    events: JSON.parse(r.events) as string[],
    enabled: bool(r.enabled),
    include_ip_user_agent: bool(r.include_ip_user_agent),
    created_at: iso(r.created_at),
    failing_since: iso(r.failing_since),
    previous_secret_expires_at: iso(r.previous_secret_expires_at),
  };
}

type RawMessage = Omit<WebhookMessage, 'next_attempt_at' | 'created_at' | 'attempts'> & {
  next_attempt_at: Date | string;
  created_at: Date | string;
  attempts: number | string;
};
const MESSAGE_COLUMNS = 'id, endpoint_id, event_id, type, payload, status, attempts, next_attempt_at, created_at';
const toMessage = (r: RawMessage): WebhookMessage => ({
  ...r,
  attempts: Number(r.attempts),
  next_attempt_at: iso(r.next_attempt_at),
  created_at: iso(r.created_at),
});

/** A message to write: its times as dates, no attempt yet. */
export type NewMessage = Omit<WebhookMessage, 'attempts' | 'next_attempt_at' | 'created_at'> & { next_attempt_at: Date; created_at: Date };

export interface NewDelivery {
  id: string;
  message_id: string;
  attempt: number;
  at: Date;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  response_body: string | null;
}

/** What happens to the message after an attempt. */
export type AfterAttempt = { status: 'delivered' } | { status: 'failed' } | { status: 'pending'; next: Date };

export function createWebhookRepository(sequelize: Sequelize) {
  const pg = sequelize.getDialect() === 'postgres';
  const select = <T extends object>(sql: string, replacements: unknown[], tx?: Transaction | null) =>
    sequelize.query<T>(sql, { type: QueryTypes.SELECT, replacements, transaction: tx ?? undefined });
  /** Runs a write; answers how many rows it touched (RETURNING on both dialects: SQLite's raw metadata carries no count). */
  const exec = async (sql: string, replacements: unknown[], tx?: Transaction | null): Promise<number> => {
    if (/^\s*INSERT/i.test(sql)) {
      await sequelize.query(sql, { replacements, transaction: tx ?? undefined });
      return 1;
    }
    return (await select<{ one: number }>(`${sql} RETURNING 1 AS one`, replacements, tx)).length;
  };

  return {
    async insertEndpoint(e: EndpointRow, opts: TxOption = {}): Promise<void> {
      await exec(
        `INSERT INTO webhook_endpoints (${ENDPOINT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          e.id,
          e.url,
          e.description,
          JSON.stringify(e.events),
          e.secret_sealed,
          e.previous_secret_sealed,
          e.previous_secret_expires_at ? new Date(e.previous_secret_expires_at) : null,
          e.include_ip_user_agent,
          e.enabled,
          e.disabled_reason,
          new Date(e.created_at),
          null,
        ],
        opts.tx,
      );
    },
    async listEndpoints(): Promise<EndpointRow[]> {
      return (await select<RawEndpoint>(`SELECT ${READ_COLUMNS} FROM webhook_endpoints WHERE ${OPERATORS} ORDER BY created_at, id`, [])).map(toEndpoint);
    },
    async findEndpoint(id: string, opts: TxOption = {}): Promise<EndpointRow | null> {
      const [r] = await select<RawEndpoint>(`SELECT ${READ_COLUMNS} FROM webhook_endpoints WHERE id = ?`, [id], opts.tx);
      return r ? toEndpoint(r) : null;
    },
    /** Enabled endpoints, read inside the event's transaction (the outbox insert). */
    async enabledEndpoints(opts: TxOption = {}): Promise<Pick<EndpointRow, 'id' | 'events' | 'include_ip_user_agent'>[]> {
      const rows = await select<{ id: string; events: string; include_ip_user_agent: unknown }>(
        `SELECT id, events, include_ip_user_agent FROM webhook_endpoints WHERE enabled = ? AND ${OPERATORS}`,
        [true],
        opts.tx,
      );
      return rows.map((r) => ({ id: r.id, events: JSON.parse(r.events) as string[], include_ip_user_agent: bool(r.include_ip_user_agent) }));
    },
    async deleteEndpoint(id: string, opts: TxOption = {}): Promise<boolean> {
      // Explicit, not only ON DELETE CASCADE: the log goes with the endpoint on every backend.
      await exec('DELETE FROM webhook_deliveries WHERE message_id IN (SELECT id FROM webhook_messages WHERE endpoint_id = ?)', [id], opts.tx);
      await exec('DELETE FROM webhook_messages WHERE endpoint_id = ?', [id], opts.tx);
      return (await exec('DELETE FROM webhook_endpoints WHERE id = ?', [id], opts.tx)) > 0;
    },
    async setSecrets(id: string, sealed: string, previous: string | null, previousUntil: Date | null): Promise<boolean> {
      return (
        (await exec('UPDATE webhook_endpoints SET secret_sealed = ?, previous_secret_sealed = ?, previous_secret_expires_at = ? WHERE id = ?', [
          sealed,
          previous,
          previousUntil,
          id,
        ])) > 0
      );
    },
    async setEnabled(id: string, enabled: boolean, reason: string | null): Promise<boolean> {
      const clearFailing = enabled ? ', failing_since = NULL' : '';
      return (await exec(`UPDATE webhook_endpoints SET enabled = ?, disabled_reason = ?${clearFailing} WHERE id = ?`, [enabled, reason, id])) > 0;
    },
    /** Stamps the start of a failing streak (kept if one is running); cleared by any success. */
    async noteOutcome(id: string, ok: boolean, now: Date): Promise<void> {
      if (ok) await exec('UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL', [id]);
      else await exec('UPDATE webhook_endpoints SET failing_since = ? WHERE id = ? AND failing_since IS NULL', [now, id]);
    },
    /**
     * Core's own endpoint of a kind (one per OpenID client for its back-channel logout URI): made on first use,
     * its URL kept current; a URL that changed is tried again even if the old one had been switched off.
     */
    async upsertSystemEndpoint(e: { id: string; kind: string; url: string; now: Date }, opts: TxOption = {}): Promise<void> {
      const changed = await exec(
        'UPDATE webhook_endpoints SET url = ?, enabled = ?, disabled_reason = NULL, failing_since = NULL WHERE id = ? AND url <> ?',
        [e.url, true, e.id, e.url],
        opts.tx,
      );
      if (changed) return;
      await sequelize.query(
        `INSERT INTO webhook_endpoints (${ENDPOINT_COLUMNS}, kind) VALUES (?, ?, NULL, '[]', '', NULL, NULL, ?, ?, NULL, ?, NULL, ?) ON CONFLICT (id) DO NOTHING`,
        { replacements: [e.id, e.url, false, true, e.now, e.kind], transaction: opts.tx ?? undefined },
      );
    },
    async insertMessage(m: NewMessage, opts: TxOption = {}): Promise<void> {
      await exec(
        'INSERT INTO webhook_messages (id, endpoint_id, event_id, type, payload, status, attempts, next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?)',
        [m.id, m.endpoint_id, m.event_id, m.type, m.payload, m.status, m.next_attempt_at, m.created_at],
        opts.tx,
      );
    },
    /**
     * Takes up to `limit` due messages for `holder` until `leaseUntil`, counting the attempt. PostgreSQL:
     * one statement, rows another instance holds are skipped (FOR UPDATE SKIP LOCKED). SQLite: each row
     * by a conditional UPDATE, which only one writer can win (its transactions go one at a time).
     */
    async claim(holder: string, now: Date, leaseUntil: Date, limit: number): Promise<WebhookMessage[]> {
      const due = "status = 'pending' AND next_attempt_at <= ? AND (locked_until IS NULL OR locked_until < ?)";
      if (pg) {
        const rows = await select<RawMessage>(
          `UPDATE webhook_messages SET locked_until = ?, lock_holder = ?, attempts = attempts + 1
           WHERE id IN (SELECT id FROM webhook_messages WHERE ${due} ORDER BY next_attempt_at LIMIT ? FOR UPDATE SKIP LOCKED)
           RETURNING ${MESSAGE_COLUMNS}`,
          [leaseUntil, holder, now, now, limit],
        );
        return rows.map(toMessage);
      }
      const candidates = await select<{ id: string }>(`SELECT id FROM webhook_messages WHERE ${due} ORDER BY next_attempt_at LIMIT ?`, [now, now, limit]);
      const won: WebhookMessage[] = [];
      for (const { id } of candidates) {
        const n = await exec(`UPDATE webhook_messages SET locked_until = ?, lock_holder = ?, attempts = attempts + 1 WHERE id = ? AND ${due}`, [
          leaseUntil,
          holder,
          id,
          now,
          now,
        ]);
        if (!n) continue;
        const [r] = await select<RawMessage>(`SELECT ${MESSAGE_COLUMNS} FROM webhook_messages WHERE id = ?`, [id]);
        if (r) won.push(toMessage(r));
      }
      return won;
    },
    /** The attempt's log line and the message's next state, together; only while `holder` still holds it. */
    async finishAttempt(holder: string, d: NewDelivery, after: AfterAttempt): Promise<void> {
      await sequelize.transaction(async (tx) => {
        await exec(
          'INSERT INTO webhook_deliveries (id, message_id, attempt, at, status_code, duration_ms, error, response_body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
          [d.id, d.message_id, d.attempt, d.at, d.status_code, d.duration_ms, d.error, d.response_body],
          tx,
        );
        const next = after.status === 'pending' ? after.next : d.at;
        await exec(
          'UPDATE webhook_messages SET status = ?, next_attempt_at = ?, locked_until = NULL, lock_holder = NULL WHERE id = ? AND lock_holder = ?',
          [after.status, next, d.message_id, holder],
          tx,
        );
      });
    },
    /** A delivery recorded for a message sent outside the worker (`webhook test`). */
    async insertDelivery(d: NewDelivery): Promise<void> {
      await exec(
        'INSERT INTO webhook_deliveries (id, message_id, attempt, at, status_code, duration_ms, error, response_body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        [d.id, d.message_id, d.attempt, d.at, d.status_code, d.duration_ms, d.error, d.response_body],
      );
    },
    async setMessageStatus(id: string, status: MessageStatus, attempts: number): Promise<void> {
      await exec('UPDATE webhook_messages SET status = ?, attempts = ? WHERE id = ?', [status, attempts, id]);
    },
    /** Pending messages of a disabled endpoint: failed (retryable once it is enabled again). */
    async failPending(endpointId: string): Promise<number> {
      return exec("UPDATE webhook_messages SET status = 'failed', locked_until = NULL, lock_holder = NULL WHERE endpoint_id = ? AND status = 'pending'", [
        endpointId,
      ]);
    },
    async findMessage(id: string): Promise<WebhookMessage | null> {
      const [r] = await select<RawMessage>(`SELECT ${MESSAGE_COLUMNS} FROM webhook_messages WHERE id = ?`, [id]);
      return r ? toMessage(r) : null;
    },
    async messageOfDelivery(deliveryId: string): Promise<string | null> {
      const [r] = await select<{ message_id: string }>('SELECT message_id FROM webhook_deliveries WHERE id = ?', [deliveryId]);
      return r?.message_id ?? null;
    },
    /** A failed (or delivered) message sent again from the start of the schedule; the same webhook-id. */
    async requeue(id: string, now: Date): Promise<boolean> {
      return (
        (await exec(
          "UPDATE webhook_messages SET status = 'pending', attempts = 0, next_attempt_at = ?, locked_until = NULL, lock_holder = NULL WHERE id = ? AND status <> 'pending'",
          [now, id],
        )) > 0
      );
    },
    async deliveries(endpointId: string, limit: number): Promise<WebhookDelivery[]> {
      const rows = await select<Omit<WebhookDelivery, 'at'> & { at: Date | string; message_status: WebhookDelivery['message_status'] }>(
        `SELECT d.id, d.message_id, m.type, d.attempt, d.at, d.status_code, d.duration_ms, d.error, d.response_body, m.status AS message_status
         FROM webhook_deliveries d JOIN webhook_messages m ON m.id = d.message_id
         WHERE m.endpoint_id = ? ORDER BY d.at DESC, d.id DESC LIMIT ?`,
        [endpointId, limit],
      );
      return rows.map((r) => ({
        ...r,
        attempt: Number(r.attempt),
        duration_ms: Number(r.duration_ms),
        status_code: r.status_code === null ? null : Number(r.status_code),
        at: iso(r.at),
      }));
    },
    /** Outbox depth and the creation time of the oldest pending message (metrics, doctor). */
    async pendingStats(): Promise<{ pending: number; oldest: Date | null }> {
      const [r] = await select<{ n: number | string; oldest: Date | string | null }>(
        "SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM webhook_messages WHERE status = 'pending'",
        [],
      );
      return { pending: Number(r?.n ?? 0), oldest: r?.oldest ? new Date(r.oldest) : null };
    },
    /** Endpoints switched off by the worker (doctor). */
    async disabledEndpoints(): Promise<EndpointRow[]> {
      return (await select<RawEndpoint>(`SELECT ${READ_COLUMNS} FROM webhook_endpoints WHERE enabled = ? AND ${OPERATORS} ORDER BY created_at`, [false])).map(
        toEndpoint,
      );
    },
    /** Deletes at most `batch` log lines and finished messages older than `before`; how many rows went. */
    async pruneBatch(before: Date, batch: number): Promise<number> {
      const d = await select<{ id: string }>('SELECT id FROM webhook_deliveries WHERE at < ? ORDER BY at LIMIT ?', [before, batch]);
      let n = 0;
      if (d.length)
        n += await exec(
          `DELETE FROM webhook_deliveries WHERE id IN (${d.map(() => '?').join(', ')})`,
          d.map((r) => r.id),
        );
      const m = await select<{ id: string }>(
        "SELECT id FROM webhook_messages WHERE created_at < ? AND status <> 'pending' AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.message_id = webhook_messages.id AND d.at >= ?) ORDER BY created_at LIMIT ?",
        [before, before, batch],
      );
      if (m.length) {
        const ids = m.map((r) => r.id);
        await exec(`DELETE FROM webhook_deliveries WHERE message_id IN (${ids.map(() => '?').join(', ')})`, ids);
        n += await exec(`DELETE FROM webhook_messages WHERE id IN (${ids.map(() => '?').join(', ')})`, ids);
      }
      return n;
    },
  };
}

export type WebhookRepository = ReturnType<typeof createWebhookRepository>;
