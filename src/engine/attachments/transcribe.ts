/**
 * Speech to text: one audio file sent as it is (its name and extension kept)
 * to an OpenAI-compatible `POST /v1/audio/transcriptions` (OpenAI's
 * `whisper-1`, a whisper.cpp or faster-whisper server) through the openai
 * SDK, within a time limit. Loaded the first time audio arrives.
 */
import OpenAI, { APIConnectionTimeoutError, APIError, APIUserAbortError, toFile } from 'openai';
import { PLACEHOLDER_API_KEY } from '../../llm/openai-provider.js';

/** Where and how audio is transcribed. */
export interface TranscriptionEndpoint {
  model: string;
  /** The endpoint; undefined: OpenAI's. */
  baseUrl: string | undefined;
  apiKey: string | undefined;
  timeoutMs: number;
}

/** What the audio says, and how long it lasts when the endpoint said. */
export interface Transcript {
  text: string;
  /** The audio's duration in seconds (`verbose_json`'s `duration`), when given. */
  seconds?: number;
}

/** Why a transcription failed: `timeout`, or `failed` with a reason fit to show (never a key or a URL). */
export class TranscriptionError extends Error {
  constructor(
    readonly reason: 'timeout' | 'failed',
    message: string,
  ) {
    super(message);
    this.name = 'TranscriptionError';
  }
}

/** Sends audio files to one endpoint. */
export class Transcriber {
  private readonly client: OpenAI;

  constructor(private readonly endpoint: TranscriptionEndpoint) {
    this.client = new OpenAI({ baseURL: endpoint.baseUrl, apiKey: endpoint.apiKey || PLACEHOLDER_API_KEY, maxRetries: 0, timeout: endpoint.timeoutMs });
  }

  /**
   * What `bytes` (an audio file called `name`, of type `mimeType`) say.
   *
   * @throws TranscriptionError when the endpoint fails, does not answer in time, or answers nothing usable
   */
  async transcribe(bytes: Uint8Array, name: string, mimeType: string): Promise<Transcript> {
    const signal = AbortSignal.timeout(this.endpoint.timeoutMs);
    let response: { text?: unknown; duration?: unknown };
    try {
      const type = mimeType.split(';')[0]!.trim();
      const file = await toFile(bytes, uploadName(name, type), { type });
      response = await this.client.audio.transcriptions.create({ file, model: this.endpoint.model, response_format: 'verbose_json' }, { signal });
    } catch (error) {
      throw failureOf(error, signal);
    }
    if (typeof response.text !== 'string') throw new TranscriptionError('failed', 'the transcription service answered without a transcript');
    const seconds = typeof response.duration === 'number' && Number.isFinite(response.duration) && response.duration >= 0 ? response.duration : undefined;
    return { text: response.text.trim(), ...(seconds !== undefined ? { seconds } : {}) };
  }
}

/** The extensions OpenAI's endpoint takes (whisper servers take these too); it goes by the name's. */
const ACCEPTED = new Set(['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', 'oga', 'ogg', 'wav', 'webm']);
/** The usual extension of audio types, for a name whose own is not taken. */
const EXTENSION_OF: Record<string, string> = { 'audio/ogg': 'ogg', 'audio/opus': 'ogg', 'audio/mpeg': 'mp3', 'audio/mp4': 'm4a', 'audio/x-m4a': 'm4a', 'audio/wav': 'wav', 'audio/x-wav': 'wav', 'audio/webm': 'webm', 'audio/flac': 'flac', 'audio/x-flac': 'flac' };

/**
 * The name the file is sent under: its own, unless its extension is one the
 * endpoint does not take (`.opus`), then with the type's (`song.opus.ogg`).
 */
export function uploadName(name: string, type: string): string {
  const ext = /\.([^.]+)$/.exec(name)?.[1]?.toLowerCase();
  if (ext && ACCEPTED.has(ext)) return name;
  const usual = EXTENSION_OF[type];
  return usual ? `${name}.${usual}` : name;
}

/** A failure in words that name no key, URL or audio. */
function failureOf(error: unknown, signal: AbortSignal): TranscriptionError {
  if (error instanceof APIConnectionTimeoutError || (error instanceof APIUserAbortError && signal.aborted)) {
    return new TranscriptionError('timeout', 'the transcription service did not answer in time');
  }
  if (error instanceof APIError && error.status !== undefined) return new TranscriptionError('failed', `the transcription service answered with an error (HTTP ${error.status})`);
  return new TranscriptionError('failed', 'the transcription service could not be reached');
}
