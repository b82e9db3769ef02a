/**
 * The stored shape of a thread: its record and the parts it is made of (chat,
 * messages, usage, group context, inbox, turn journal), as zod schemas that
 * validate what a storage reads, with their types. The history
 * (`history.ts`) works on these records; the storages (`thread-log.ts`, and
 * the shared one under `cluster/`) persist them.
 */
import { z } from 'zod';
import type { ChatMessage } from '../llm/types.js';

/** Zod schema of a stored tool call. */
export const ToolCallSchema = z.object({ id: z.string(), name: z.string(), arguments: z.string() });

/** Zod schema of a stored chat (the fields of `ChatInfo`). */
export const ChatRecordSchema = z.object({
  channel: z.string(),
  chatId: z.string(),
  subId: z.string().optional(),
  kind: z.enum(['dm', 'group']),
  title: z.string().optional(),
  scope: z.string(),
});

/** Zod schema of one conversation message (the store's copy of `ChatMessage`). */
export const ChatMessageSchema: z.ZodType<ChatMessage> = z.union([
  z.object({ role: z.literal('system'), content: z.string() }),
  // An image is kept as its workspace path and type; a data URL (a request's alone) is never read back.
  z.object({ role: z.literal('user'), content: z.string(), name: z.string().optional(), images: z.array(z.object({ path: z.string(), mimeType: z.string(), turn: z.number() })).optional() }),
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
  /** Images sent to the model with the calls (each estimated at IMAGE_TOKEN_ESTIMATE input tokens). */
  images: z.number().optional(),
});
/** Tokens and dollars spent. */
export type UsageTotals = z.infer<typeof UsageTotalsSchema>;

/** A group message the bot was not addressed in, kept for context. */
export const GroupLineSchema = z.object({ sender: z.string(), text: z.string(), at: z.number() });
/** A group message the bot was not addressed in, kept for context. */
export type GroupLine = z.infer<typeof GroupLineSchema>;

/** Zod schema of an attachment's metadata and platform reference (`AttachmentMeta`); records from before kinds read as `other`. */
export const AttachmentMetaSchema = z.object({
  kind: z.enum(['image', 'audio', 'document', 'video', 'other']).default('other'),
  name: z.string(),
  mimeType: z.string().optional(),
  sizeBytes: z.number().optional(),
  fileId: z.string().optional(),
  url: z.string().optional(),
});

/**
 * A file received in the thread and saved in its workspace: with the
 * platform reference it came by, so that an instance that does not find it
 * on its disk (another instance, a new disk) fetches it again.
 */
export const SavedAttachmentSchema = z.object({
  /** How the platform described it, and where to fetch it. */
  source: AttachmentMetaSchema,
  /** Where it was saved, relative to the workspace: `attachments/notes.md`. */
  path: z.string(),
  /** Qualified id of the person who sent it. */
  userId: z.string(),
  /** The kind and type sniffed from the bytes. */
  kind: z.enum(['image', 'audio', 'document', 'video', 'other']),
  mimeType: z.string(),
  sizeBytes: z.number(),
  /** SHA-256 of the bytes, hex: the same file fetched again is recognised. */
  sha256: z.string(),
  /** For a PDF with a text layer, or transcribed audio: where its text was saved (`attachments/report.pdf.txt`, `attachments/voice.ogg.txt`). */
  textPath: z.string().optional(),
});
/** A file received in the thread and saved in its workspace. */
export type SavedAttachment = z.infer<typeof SavedAttachmentSchema>;

/**
 * A person's message accepted by the thread and not yet in its history
 * (waiting for a turn slot, or for the running turn to read it). Kept in the
 * record so that a crash or a shutdown loses none: they run after a restart.
 */
export const QueuedMessageSchema = z.object({
  /** Stable id: the platform message id with its arrival time. */
  id: z.string(),
  messageId: z.string(),
  sender: z.object({ id: z.string(), name: z.string(), isBot: z.boolean().optional() }),
  text: z.string(),
  receivedAt: z.number(),
  mentionsBot: z.boolean(),
  replyToBot: z.boolean(),
  attachments: z.array(AttachmentMetaSchema),
});
/** A person's message accepted by the thread and not yet in its history. */
export type QueuedMessage = z.infer<typeof QueuedMessageSchema>;

/**
 * The turn journal of a thread: present from the moment a turn starts until
 * its answer has been delivered (or it ended another way). Found at start-up,
 * it means the process died mid-turn, and the turn is resumed.
 */
export const OpenTurnSchema = z.object({
  startedAt: z.number(),
  /** Qualified id of the person the turn answers. */
  userId: z.string(),
  speaker: z.object({ id: z.string(), name: z.string() }),
  replyTo: z.string().optional(),
  /** `running` until the turn's last message is decided; `delivering` while it is being sent. */
  phase: z.enum(['running', 'delivering']),
  /** The message being delivered (phase `delivering`): sent again if the process died sending it. */
  answer: z.string().optional(),
  /** Platform ids of the message the reply is streaming into, if any: the answer replaces it. */
  draft: z.array(z.string()).optional(),
  /** Shown above the answer: what the person's voice messages were heard as (`🎤 "…"`). */
  preface: z.string().optional(),
});
/** The turn journal of a thread. */
export type OpenTurn = z.infer<typeof OpenTurnSchema>;

/** The stored state of one thread. */
export const ThreadRecordSchema = z.object({
  key: z.string(),
  chat: ChatRecordSchema,
  messages: z.array(ChatMessageSchema),
  groupContext: z.array(GroupLineSchema),
  usage: UsageTotalsSchema,
  turns: z.number(),
  /**
   * A random id of the turn people's messages started last, kept through its
   * approvals and a restart's resumption: what the turn sends (a file) is
   * named by it, so that a resumed turn does not send it twice.
   */
  turnId: z.string().optional(),
  lastIteration: z.number(),
  updatedAt: z.number(),
  inbox: z.array(QueuedMessageSchema).default([]),
  turn: OpenTurnSchema.optional(),
  /** The model chosen with `/model`; the default when unset. */
  model: z.string().optional(),
  /** What the bot said outside a turn (a job's result, a reminder) while one was open: history from the next turn's start. */
  said: z.array(z.string()).optional(),
  /** Names of the latest named messages written into the history (see delivery.ts), so that one sent again is written once. */
  delivered: z.array(z.string()).optional(),
  /** The files received in the thread, newest last (the latest {@link SAVED_ATTACHMENTS_KEPT}). */
  attachments: z.array(SavedAttachmentSchema).optional(),
});

/** How many received files a thread's record remembers. */
export const SAVED_ATTACHMENTS_KEPT = 50;
/** The stored state of one thread. */
export type ThreadRecord = z.infer<typeof ThreadRecordSchema>;

/** Zeroed usage totals. */
export const zeroUsage = (): UsageTotals => ({ inputTokens: 0, outputTokens: 0, cachedTokens: 0, costUsd: 0, calls: 0 });
