/**
 * Speech to text: one audio file sent as it is (its name and extension kept)
 * to an OpenAI-compatible `POST /v1/audio/transcriptions` (OpenAI's
 * `whisper-1`, a whisper.cpp or faster-whisper server) through the openai
 * SDK, within a time limit. Loaded the first time audio arrives.
 */
import OpenAI, { APIConnectionTimeoutError, APIError, APIUserAbortError, toFile } from 'openai';
import { PLACEHOLDER_API_KEY } from '../../llm/openai-provider.js';
import type { TranscriptionEndpoint } from './voice.js';

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
      const file = await toFile(bytes, name, { type: mimeType.split(';')[0]!.trim() });
      response = await this.client.audio.transcriptions.create({ file, model: this.endpoint.model, response_format: 'verbose_json' }, { signal });
    } catch (error) {
      throw failureOf(error, signal);
    }
    if (typeof response.text !== 'string') throw new TranscriptionError('failed', 'the transcription service answered without a transcript');
    const seconds = typeof response.duration === 'number' && Number.isFinite(response.duration) && response.duration >= 0 ? response.duration : undefined;
    return { text: response.text.trim(), ...(seconds !== undefined ? { seconds } : {}) };
  }
}

/** A failure in words that name no key, URL or audio. */
function failureOf(error: unknown, signal: AbortSignal): TranscriptionError {
  if (error instanceof APIConnectionTimeoutError || (error instanceof APIUserAbortError && signal.aborted)) {
    return new TranscriptionError('timeout', 'the transcription service did not answer in time');
  }
  if (error instanceof APIError && error.status !== undefined) return new TranscriptionError('failed', `the transcription service answered with an error (HTTP ${error.status})`);
  return new TranscriptionError('failed', 'the transcription service could not be reached');
}
