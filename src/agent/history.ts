/**
 * Persisted conversation threads: the history the model sees, recent group
 * context, and usage. One record per thread key, validated on read.
 */
import { z } from 'zod';
import type { ChatInfo } from '../channels/types.js';
import type { ChatMessage } from '../llm/types.js';
import type { Namespace, Store } from '../store/store.js';

const ToolCallSchema = z.object({ id: z.string(), name: z.string(), arguments: z.string() });

/** Zod schema of one conversation message (the store's copy of `ChatMessage`). */
export const ChatMessageSchema: z.ZodType<ChatMessage> = z.union([
  z.object({ role: z.literal('system'), content: z.string() }),
  z.object({ role: z.literal('user'), content: z.string(), name: z.string().optional() }),
  z.object({ role: z.literal('assistant'), content: z.string().nullable(), toolCalls: z.array(ToolCallSchema).optional() }),
  z.object({ role: z.literal('tool'), toolCallId: z.string(), content: z.string() }),
]);

/** Tokens and dollars spent. */
export const UsageTotalsSchema = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  cachedTokens: z.number(),
  costUsd: z.number(),
  calls: z.number(),
});
/** Tokens and dollars spent. */
export type UsageTotals = z.infer<typeof UsageTotalsSchema>;

/** A group message the bot was not addressed in, kept for context. */
export const GroupLineSchema = z.object({ sender: z.string(), text: z.string(), at: z.number() });
/** A group message the bot was not addressed in, kept for context. */
export type GroupLine = z.infer<typeof GroupLineSchema>;

/** The stored state of one thread. */
export const ThreadRecordSchema = z.object({
  key: z.string(),
  chat: z.object({
    channel: z.string(),
    chatId: z.string(),
    subId: z.string().optional(),
    kind: z.enum(['dm', 'group']),
    title: z.string().optional(),
    scope: z.string(),
  }),
  messages: z.array(ChatMessageSchema),
  groupContext: z.array(GroupLineSchema),
  usage: UsageTotalsSchema,
  turns: z.number(),
  lastIteration: z.number(),
  updatedAt: z.number(),
});
/** The stored state of one thread. */
export type ThreadRecord = z.infer<typeof ThreadRecordSchema>;

/** Zeroed usage totals. */
export const zeroUsage = (): UsageTotals => ({ inputTokens: 0, outputTokens: 0, cachedTokens: 0, costUsd: 0, calls: 0 });

/** Reads and writes thread records. */
export class ThreadHistory {
  private readonly records: Namespace<ThreadRecord>;
  /** Updates in flight per thread: a load waits for them, so context written just before a turn is in it. */
  private readonly inFlight = new Map<string, Promise<unknown>>();

  constructor(store: Store) {
    this.records = store.namespace('thread', ThreadRecordSchema, 1);
  }

  /** The thread's record, or a fresh one for a chat never seen. */
  async load(key: string, chat: ChatInfo): Promise<ThreadRecord> {
    await this.inFlight.get(key);
    const existing = await this.records.get(key);
    if (existing) return { ...existing, chat: { ...existing.chat, ...chatFields(chat) } };
    return { key, chat: chatFields(chat), messages: [], groupContext: [], usage: zeroUsage(), turns: 0, lastIteration: 0, updatedAt: Date.now() };
  }

  /** The thread's record if it exists. */
  get(key: string): Promise<ThreadRecord | undefined> {
    return this.records.get(key);
  }

  /** Writes the record. */
  async save(record: ThreadRecord): Promise<void> {
    await this.records.set(record.key, { ...record, updatedAt: Date.now() });
  }

  /** Changes one record atomically (within this process). */
  async update(key: string, chat: ChatInfo, change: (record: ThreadRecord) => void): Promise<ThreadRecord> {
    const writing = this.records.update(key, (current) => {
      const record = current ?? { key, chat: chatFields(chat), messages: [], groupContext: [], usage: zeroUsage(), turns: 0, lastIteration: 0, updatedAt: Date.now() };
      change(record);
      record.updatedAt = Date.now();
      return record;
    });
    const tracked = writing.catch(() => undefined);
    this.inFlight.set(key, tracked);
    void tracked.then(() => {
      if (this.inFlight.get(key) === tracked) this.inFlight.delete(key);
    });
    return (await writing)!;
  }
}

function chatFields(chat: ChatInfo): ThreadRecord['chat'] {
  const fields: ThreadRecord['chat'] = { channel: chat.channel, chatId: chat.chatId, kind: chat.kind, scope: chat.scope };
  if (chat.subId !== undefined) fields.subId = chat.subId;
  if (chat.title !== undefined) fields.title = chat.title;
  return fields;
}
