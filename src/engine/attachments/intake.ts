/**
 * Receiving the files of people's messages: when the turn that reads a
 * message runs (never before), each file is checked against the limits
 * (`attachments.*`), fetched through its channel, sniffed, and saved in
 * `attachments/` of the conversation's workspace. A file that cannot be taken
 * is refused with a reason; the rest of the message goes on. Saved files are
 * remembered with their platform reference, so that an instance that does
 * not find one on its disk fetches it again ({@link AttachmentIntake.restore}).
 */
import { lstat, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { qualifiedUserId, type AttachmentMeta, type Channel, type ChatInfo, type InboundMessage } from '../../channels/types.js';
import type { Config } from '../../config/schema.js';
import { AttachmentFetchError } from '../../errors.js';
import type { SavedAttachment } from '../thread-record.js';
import type { Logger } from '../../log.js';
import { workspaceDirOf } from '../../tools/builtin/index.js';
import { workspaceFolder } from '../../tools/builtin/lib/workspaces.js';
import type { DailyBytes } from './daily-bytes.js';
import { shownName, sizeText, type ReceivedAttachment, type RefusalReason } from './received.js';
import { pdfText } from './pdf-text.js';
import { holds, safeFileName, saveInWorkspace, sha256Of } from './save.js';
import { sniffType } from './sniff.js';
import type { VoiceTranscripts } from './voice.js';

/** What the intake needs. */
export interface AttachmentIntakeDeps {
  config: Pick<Config, 'attachments' | 'dataDir' | 'tools'>;
  /** The running channel of that name. */
  channelOf(channel: string): Channel | undefined;
  daily: DailyBytes;
  /** Transcribes voice and audio; without it, audio is saved untranscribed. */
  voice?: VoiceTranscripts;
  log: Logger;
}

/** One file on its way in: where it came from and what it may still weigh. */
interface Arrival {
  chat: ChatInfo;
  userId: string;
  workspace: string;
  attachment: AttachmentMeta;
  name: string;
  /** Bytes the message's files may still take. */
  messageLeft: number;
}

/** Takes in the files of messages. */
export class AttachmentIntake {
  constructor(private readonly deps: AttachmentIntakeDeps) {}

  /** The voice step, when there is one. */
  get voice(): VoiceTranscripts | undefined {
    return this.deps.voice;
  }

  /** What became of each file of `message`, in order. */
  async receive(chat: ChatInfo, message: InboundMessage): Promise<ReceivedAttachment[]> {
    const userId = qualifiedUserId(chat.channel, message.sender.id);
    const workspace = this.workspaceOf(chat, userId);
    let messageLeft = this.deps.config.attachments.maxBytesPerMessage;
    const results: ReceivedAttachment[] = [];
    for (const attachment of message.attachments) {
      const result = await this.receiveOne({ chat, userId, workspace, attachment, name: shownName(attachment.name), messageLeft });
      if (result.status === 'saved') messageLeft -= result.saved.sizeBytes;
      results.push(result);
    }
    return results;
  }

  /**
   * Fetches again the saved files this instance does not have (another
   * instance saved them, or the disk is new), where they were saved.
   * Failures are logged; the model was told of the files already.
   */
  async restore(chat: ChatInfo, saved: SavedAttachment[]): Promise<void> {
    for (const entry of saved) {
      const workspace = this.workspaceOf(chat, entry.userId);
      if (await holds(workspace, entry.path, entry.sizeBytes)) continue;
      try {
        const bytes = await this.fetch(chat, entry.source, entry.sizeBytes);
        if (sha256Of(bytes) !== entry.sha256) throw new Error('the file fetched again differs from the one received');
        entry.path = await saveInWorkspace(workspace, basename(entry.path), bytes);
        if (entry.textPath && entry.kind === 'audio') await this.deps.voice?.restoreText(workspace, entry);
        else if (entry.textPath) await this.saveText(workspace, entry, bytes);
        this.deps.log.info({ channel: chat.channel, path: entry.path }, 'attachment fetched again');
      } catch (error) {
        this.deps.log.warn({ channel: chat.channel, path: entry.path, reason: reasonOf(error) }, 'could not fetch an attachment again');
      }
    }
  }

  /**
   * The bytes of a file saved in this chat (an entry of the thread's record),
   * fetched again first by its platform reference when this instance does not
   * have it; undefined when it can be neither read nor fetched.
   */
  async bytesOf(chat: ChatInfo, saved: SavedAttachment): Promise<Uint8Array | undefined> {
    await this.restore(chat, [saved]);
    const path = join(this.workspaceOf(chat, saved.userId), saved.path);
    try {
      // Never through a link: the workspace is the model's to write in.
      if (!(await lstat(path)).isFile()) return undefined;
      return await readFile(path);
    } catch {
      return undefined;
    }
  }

  private async receiveOne(arrival: Arrival): Promise<ReceivedAttachment> {
    const limits = this.deps.config.attachments;
    const declared = arrival.attachment.sizeBytes;
    const refuse = (reason: RefusalReason, why: string): ReceivedAttachment => ({ status: 'refused', name: arrival.name, reason, why });
    if (declared !== undefined && declared > limits.maxBytes) return refuse('too-big', `is ${sizeText(declared)}, over the limit of ${sizeText(limits.maxBytes)} per file`);
    if (declared !== undefined && declared > arrival.messageLeft) return refuse('message-total', this.messageTotalWhy());
    const dayLeft = await this.deps.daily.remaining(arrival.userId);
    if ((declared ?? 1) > dayLeft) return refuse('daily', this.dailyWhy());
    const cap = Math.min(limits.maxBytes, arrival.messageLeft, dayLeft);
    let bytes: Uint8Array;
    try {
      bytes = await this.fetch(arrival.chat, arrival.attachment, cap);
    } catch (error) {
      this.deps.log.info({ channel: arrival.chat.channel, reason: reasonOf(error) }, 'attachment not downloaded');
      return this.fetchRefusal(error, cap, arrival, refuse);
    }
    return this.keep(arrival, bytes, refuse);
  }

  /** Sniffs, books and saves fetched bytes. */
  private async keep(arrival: Arrival, bytes: Uint8Array, refuse: (reason: RefusalReason, why: string) => ReceivedAttachment): Promise<ReceivedAttachment> {
    const { attachment } = arrival;
    const type = await sniffType(bytes, attachment.mimeType, attachment.name);
    if ('problem' in type) {
      if (type.problem === 'unknown') return refuse('unknown-type', 'is of a type I cannot tell: neither text nor a file format I know');
      return refuse('mismatch', `does not hold what it claims to be (it says ${type.declared}, but the contents are ${type.found})`);
    }
    if (!(await this.deps.daily.book(arrival.userId, bytes.byteLength))) return refuse('daily', this.dailyWhy());
    try {
      const path = await saveInWorkspace(arrival.workspace, safeFileName(attachment.name, type.ext), bytes);
      const saved: SavedAttachment = {
        source: { ...attachment },
        path,
        userId: arrival.userId,
        kind: type.kind,
        mimeType: type.mimeType,
        sizeBytes: bytes.byteLength,
        sha256: sha256Of(bytes),
      };
      if (type.mimeType === 'application/pdf') await this.saveText(arrival.workspace, saved, bytes);
      if (type.kind === 'audio' && this.deps.voice) return { status: 'saved', saved, transcript: await this.deps.voice.transcribe(arrival.workspace, saved, bytes) };
      return { status: 'saved', saved };
    } catch (error) {
      this.deps.log.error({ err: error, channel: arrival.chat.channel }, 'could not save an attachment');
      return refuse('failed', 'could not be saved');
    }
  }

  /** Saves the text of a PDF beside it, for `files_read`; a PDF without text keeps none. */
  private async saveText(workspace: string, saved: SavedAttachment, bytes: Uint8Array): Promise<void> {
    const text = await pdfText(bytes);
    if (text === undefined) return;
    saved.textPath = await saveInWorkspace(workspace, `${basename(saved.path)}.txt`, Buffer.from(text, 'utf8'));
  }

  private fetchRefusal(error: unknown, cap: number, arrival: Arrival, refuse: (reason: RefusalReason, why: string) => ReceivedAttachment): ReceivedAttachment {
    const limits = this.deps.config.attachments;
    if (!(error instanceof AttachmentFetchError)) return refuse('failed', 'could not be downloaded');
    if (error.reason === 'timeout') return refuse('timeout', `took too long to download (over ${Math.round(limits.downloadTimeoutMs / 1000)} s)`);
    if (error.reason === 'failed') return refuse('failed', `could not be downloaded: ${error.message}`);
    // The platform's own limit (Telegram's 20 MB) may be the lower one; otherwise the lowest of ours was passed.
    if (error.limitBytes !== undefined && error.limitBytes < cap) return refuse('too-big', `is over the limit of ${sizeText(error.limitBytes)} per file`);
    if (cap === limits.maxBytes) return refuse('too-big', `is over the limit of ${sizeText(cap)} per file`);
    if (cap === arrival.messageLeft) return refuse('message-total', this.messageTotalWhy());
    return refuse('daily', this.dailyWhy());
  }

  private messageTotalWhy(): string {
    return `would take this message's files past the limit of ${sizeText(this.deps.config.attachments.maxBytesPerMessage)}`;
  }

  private dailyWhy(): string {
    return `would take you past today's limit of ${sizeText(this.deps.daily.limit)} of files`;
  }

  /** The bytes of `attachment` through its channel. */
  private fetch(chat: ChatInfo, attachment: AttachmentMeta, maxBytes: number): Promise<Uint8Array> {
    const channel = this.deps.channelOf(chat.channel);
    if (!channel?.fetchAttachment) return Promise.reject(new AttachmentFetchError('failed', 'this channel cannot download files'));
    const signal = AbortSignal.timeout(this.deps.config.attachments.downloadTimeoutMs);
    return channel.fetchAttachment(attachment, { maxBytes, signal });
  }

  /** The workspace files of this chat go to: the group's, or in a DM the person's own. */
  private workspaceOf(chat: ChatInfo, userId: string): string {
    const root = workspaceDirOf(this.deps.config);
    return workspaceFolder(root, chat.kind === 'group' ? { kind: 'chat', channel: chat.channel, chatId: chat.chatId } : { kind: 'person', userId });
  }
}

/** What to log of a failure: an AttachmentFetchError's message (never a URL), else only the error's name. */
function reasonOf(error: unknown): string {
  if (error instanceof AttachmentFetchError) return `${error.reason}: ${error.message}`;
  return error instanceof Error ? error.name : 'unknown error';
}
