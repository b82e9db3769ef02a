/**
 * The audit trail of tool calls and policy changes, kept in the store as a ring
 * of the most recent records so it never grows without bound.
 */
import { z } from 'zod';
import type { Logger } from '../log.js';
import type { Store } from '../store/store.js';

/** One tool call as it ended; `args` are redacted and bounded. */
export const CallAuditSchema = z.object({
  kind: z.literal('call'),
  tool: z.string(),
  userId: z.string(),
  threadKey: z.string(),
  args: z.string(),
  status: z.enum(['ok', 'error', 'needs_approval', 'rejected', 'skipped']),
  durationMs: z.number(),
  at: z.number(),
});

/** One change of admin policy: who set what, where, when. */
export const PolicyAuditSchema = z.object({
  kind: z.literal('policy'),
  tool: z.string(),
  scope: z.string(),
  mode: z.enum(['allow', 'ask', 'disable', 'reset']),
  by: z.string(),
  at: z.number(),
});

/** A stored audit record. */
export const AuditRecordSchema = z.discriminatedUnion('kind', [CallAuditSchema, PolicyAuditSchema]);

/** A stored audit record. */
export type AuditRecord = z.infer<typeof AuditRecordSchema>;

/** Appends and reads audit records. */
export interface AuditLog {
  /** Stores a record. Resolves once written; a failed write is logged, never thrown. */
  record(entry: AuditRecord): Promise<void>;
  /** The newest records first, at most `limit`. */
  recent(limit?: number): Promise<AuditRecord[]>;
}

/** Options for {@link createAuditLog}. */
export interface AuditLogOptions {
  /** Records kept; older ones are overwritten. Default 5000. */
  capacity?: number;
  log: Logger;
}

const CursorSchema = z.object({ next: z.number().int().nonnegative() });

/** Creates the audit log over `store`. */
export function createAuditLog(store: Store, options: AuditLogOptions): AuditLog {
  const capacity = options.capacity ?? 5000;
  const slots = store.namespace('tool-audit', AuditRecordSchema);
  const cursor = store.namespace('tool-audit-cursor', CursorSchema);
  // Records arriving together share one cursor update: a busy bot writes audit
  // records in batches, not one read-modify-write per call.
  let pending: { entry: AuditRecord; done: () => void }[] = [];
  let flushing: Promise<void> | undefined;
  const flush = async () => {
    while (pending.length) {
      const batch = pending;
      pending = [];
      try {
        const after = await cursor.update('ring', (current) => ({ next: (current?.next ?? 0) + batch.length }));
        const first = (after?.next ?? batch.length) - batch.length;
        await Promise.all(batch.map((item, i) => slots.set(String((first + i) % capacity), item.entry)));
      } catch (error) {
        options.log.error({ err: error, records: batch.length }, 'audit records not written');
      }
      for (const item of batch) item.done();
    }
    flushing = undefined;
  };
  return {
    record(entry) {
      return new Promise<void>((done) => {
        pending.push({ entry, done });
        flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(flush);
      });
    },
    async recent(limit = 50) {
      const total = (await cursor.get('ring'))?.next ?? 0;
      const count = Math.min(limit, total, capacity);
      const keys = Array.from({ length: count }, (_, i) => String((total - 1 - i) % capacity));
      const records = await Promise.all(keys.map((key) => slots.get(key)));
      return records.filter((r): r is AuditRecord => r !== undefined);
    },
  };
}
