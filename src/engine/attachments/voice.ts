/**
 * Voice messages and audio files: transcribed once when the turn takes them
 * in (transcribe.ts, loaded the first time audio arrives), the transcript
 * saved beside the file (`voice.ogg.txt`) and kept in the store by the
 * audio's hash, so that a turn run again after a restart, or another instance,
 * reuses it instead of transcribing again. Also what is counted (the audio's
 * minutes per person per day, for `/usage`) and remembered (that a
 * conversation was told transcription is not set up, to tell it once).
 */
import { basename } from 'node:path';
import { z } from 'zod';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../log.js';
import type { Namespace } from '../../store/store.js';
import type { SavedAttachment } from '../thread-record.js';
import { saveInWorkspace } from './save.js';
import type { Transcriber, Transcript, TranscriptionEndpoint } from './transcribe.js';

export type { TranscriptionEndpoint } from './transcribe.js';

/** What became of an audio file's transcription. */
export type TranscriptOutcome =
  | {
      status: 'done';
      text: string;
      /** The audio's duration, when the endpoint said. */
      seconds?: number;
    }
  /** No transcription endpoint is configured. */
  | { status: 'off' }
  | {
      status: 'failed';
      /** Why, in a few words fit to show: `the transcription service did not answer in time`. */
      why: string;
    };

/** A transcript as kept in the store. */
export const StoredTranscriptSchema = z.object({ text: z.string(), seconds: z.number().optional() });
type StoredTranscript = z.infer<typeof StoredTranscriptSchema>;

/** How long a transcript is kept in the store for a turn run again or another instance. */
const CACHE_TTL_MS = 30 * 24 * 3_600_000;

/**
 * The endpoint of `llm.transcription`: the default model's address and key
 * unless it names its own; undefined when transcription is not configured.
 */
export function transcriptionEndpoint(llm: Config['llm'], env: NodeJS.ProcessEnv = process.env): TranscriptionEndpoint | undefined {
  const settings = llm.transcription;
  if (!settings) return undefined;
  return {
    model: settings.model,
    baseUrl: settings.baseUrl ?? llm.baseUrl,
    apiKey: settings.apiKeyEnv ? env[settings.apiKeyEnv] : llm.apiKey,
    timeoutMs: settings.timeoutMs,
  };
}

/** What the voice step needs. */
export interface VoiceDeps {
  /** Undefined: transcription is not configured. */
  endpoint: TranscriptionEndpoint | undefined;
  /** Transcripts by model and the audio's SHA-256, shared by every instance. */
  transcripts: Namespace<StoredTranscript>;
  /** Seconds of audio transcribed, per person per UTC day and in total. */
  seconds: Namespace<number>;
  /** The conversations told that transcription is not set up: the message that told them. */
  toldOff: Namespace<string>;
  log: Logger;
  now?: () => number;
}

/** Transcribes received audio. */
export class VoiceTranscripts {
  private transcriber: Promise<Transcriber> | undefined;

  constructor(private readonly deps: VoiceDeps) {}

  /**
   * The transcript of a saved audio file (`bytes`), saved beside it in
   * `workspace` (its path set as `saved.textPath`), from the store when this
   * audio was transcribed before.
   */
  async transcribe(workspace: string, saved: SavedAttachment, bytes: Uint8Array): Promise<TranscriptOutcome> {
    const endpoint = this.deps.endpoint;
    if (!endpoint) return { status: 'off' };
    const key = `${endpoint.model}:${saved.sha256}`;
    let transcript: Transcript | undefined = await this.cached(key);
    if (!transcript) {
      const started = Date.now();
      try {
        transcript = await (await this.client(endpoint)).transcribe(bytes, basename(saved.path), saved.mimeType);
      } catch (error) {
        const why = error instanceof Error && error.name === 'TranscriptionError' ? error.message : 'the transcription failed';
        this.deps.log.warn({ path: saved.path, model: endpoint.model, bytes: saved.sizeBytes, reason: why }, 'audio not transcribed');
        return { status: 'failed', why };
      }
      this.deps.log.info({ path: saved.path, model: endpoint.model, bytes: saved.sizeBytes, seconds: transcript.seconds, ms: Date.now() - started }, 'audio transcribed');
      await this.deps.transcripts.set(key, transcript, CACHE_TTL_MS).catch((error: unknown) => this.deps.log.warn({ err: error }, 'could not keep a transcript'));
      if (transcript.seconds) await this.count(saved.userId, transcript.seconds);
    }
    if (!transcript.text) return { status: 'failed', why: 'nothing could be heard in it' };
    try {
      saved.textPath = await saveInWorkspace(workspace, `${basename(saved.path)}.txt`, Buffer.from(`${transcript.text}\n`, 'utf8'));
    } catch (error) {
      // The model reads the transcript in the message all the same.
      this.deps.log.warn({ err: error, path: saved.path }, 'could not save a transcript beside its audio');
    }
    return { status: 'done', text: transcript.text, ...(transcript.seconds !== undefined ? { seconds: transcript.seconds } : {}) };
  }

  /** Writes again the transcript file of audio fetched again, from the store (never transcribing again). */
  async restoreText(workspace: string, saved: SavedAttachment): Promise<void> {
    const endpoint = this.deps.endpoint;
    const transcript = endpoint ? await this.cached(`${endpoint.model}:${saved.sha256}`) : undefined;
    if (!transcript?.text) return;
    saved.textPath = await saveInWorkspace(workspace, `${basename(saved.path)}.txt`, Buffer.from(`${transcript.text}\n`, 'utf8'));
  }

  /**
   * Whether the conversation `thread` is to be told, with message
   * `messageId`, that transcription is not set up: the first time only (and
   * again for that same message, when its turn runs again after a restart).
   */
  async tellOff(thread: string, messageId: string): Promise<boolean> {
    const told = await this.deps.toldOff.update(thread, (current) => current ?? messageId);
    return told === messageId;
  }

  /** Seconds of audio transcribed today for `userId` (qualified), or for everyone without one. */
  async secondsToday(userId?: string): Promise<number> {
    return (await this.deps.seconds.get(userId ? `user:${userId}:${this.day()}` : `total:${this.day()}`)) ?? 0;
  }

  private async count(userId: string, seconds: number): Promise<void> {
    const day = this.day();
    try {
      for (const key of [`user:${userId}:${day}`, `total:${day}`]) await this.deps.seconds.update(key, (current = 0) => current + seconds);
    } catch (error) {
      this.deps.log.warn({ err: error }, 'could not count transcribed audio');
    }
  }

  private async cached(key: string): Promise<StoredTranscript | undefined> {
    try {
      return await this.deps.transcripts.get(key);
    } catch {
      return undefined;
    }
  }

  private client(endpoint: TranscriptionEndpoint): Promise<Transcriber> {
    this.transcriber ??= import('./transcribe.js').then(({ Transcriber }) => new Transcriber(endpoint));
    return this.transcriber;
  }

  private day(): string {
    return new Date((this.deps.now ?? Date.now)()).toISOString().slice(0, 10);
  }
}
