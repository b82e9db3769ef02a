import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Writable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AttachmentMeta, Channel, ChatInfo, InboundMessage } from '../../../src/channels/types.js';
import { parseConfig } from '../../../src/config/load.js';
import { DailyBytes } from '../../../src/engine/attachments/daily-bytes.js';
import { AttachmentIntake } from '../../../src/engine/attachments/intake.js';
import type { ReceivedAttachment } from '../../../src/engine/attachments/received.js';
import { transcriptionEndpoint, VoiceTranscripts, type TranscriptionEndpoint } from '../../../src/engine/attachments/voice.js';
import { modelLine, transcriptionNotice, transcriptLines, transcriptQuote } from '../../../src/chat/attachments/describe.js';
import { createLogger, silentLogger, type Logger } from '../../../src/log.js';
import type { Namespace } from '../../../src/store/store.js';
import { startFakeLlm, type FakeLlm } from '../../fakes/llm/server.js';
import { oggOpus, webm } from '../../support/audio.js';
import { sniffType } from '../../../src/engine/attachments/sniff.js';

const DM: ChatInfo = { channel: 'test', chatId: 'ada', kind: 'dm', scope: 'global' };
const VOICE: AttachmentMeta = { kind: 'audio', name: 'voice.ogg', mimeType: 'audio/ogg' };

/** A namespace in memory: what a store keeps across a restart, or shares between instances. */
function memory<T>(): Namespace<T> {
  const values = new Map<string, T>();
  return {
    get: async (key) => values.get(key),
    set: async (key, value) => void values.set(key, value),
    delete: async (key) => values.delete(key),
    entry: (key, value) => ({ namespace: 'memory', key, value: { v: 1, data: value } }),
    update: async (key, change) => {
      const next = change(values.get(key));
      if (next === undefined) values.delete(key);
      else values.set(key, next);
      return next;
    },
  };
}

function message(id: string, ...attachments: AttachmentMeta[]): InboundMessage {
  return { type: 'message', chat: DM, sender: { id: 'ada', name: 'Ada' }, receivedAt: 1, messageId: id, text: '', mentionsBot: true, replyToBot: false, attachments };
}

describe('transcription of voice and audio', () => {
  let llm: FakeLlm;
  let dataDir: string;
  /** What the store keeps: shared by every intake of a test, as instances share a store. */
  let stored: { transcripts: Namespace<{ text: string; seconds?: number }>; seconds: Namespace<number>; toldOff: Namespace<string> };
  const bytes = oggOpus();

  beforeEach(async () => {
    llm = await startFakeLlm({ apiKey: 'sk-whisper' });
    dataDir = mkdtempSync(join(tmpdir(), 'pincer-voice-'));
    stored = { transcripts: memory(), seconds: memory(), toldOff: memory() };
  });
  afterEach(async () => {
    await llm.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** An intake (one instance) with its own data folder unless given, transcribing at `endpoint`. */
  const instance = (endpoint: Partial<TranscriptionEndpoint> | undefined, dir = dataDir, log: Logger = silentLogger) => {
    const config = parseConfig({ dataDir: dir });
    const channel = { name: 'test', fetchAttachment: async () => bytes } as unknown as Channel;
    const voice = new VoiceTranscripts({
      endpoint: endpoint && { model: 'whisper-1', baseUrl: llm.url, apiKey: 'sk-whisper', timeoutMs: 5_000, ...endpoint },
      ...stored,
      log,
    });
    const intake = new AttachmentIntake({ config, channelOf: () => channel, daily: new DailyBytes(memory<number>(), 1e9), voice, log: silentLogger });
    return { intake, voice, workspace: join(dir, 'workspace', 'users', 'test', 'ada') };
  };
  const saved = (received: ReceivedAttachment | undefined) => {
    if (received?.status !== 'saved') throw new Error(`not saved: ${JSON.stringify(received)}`);
    return received;
  };

  it('sends the voice note as it is to /v1/audio/transcriptions and saves the transcript beside it', async () => {
    llm.transcriptions.set({ type: 'transcript', text: 'Buy milk and call Bob.', duration: 90 });
    const { intake, voice, workspace } = instance({});
    const [received] = await intake.receive(DM, message('1', VOICE));
    const voiceNote = saved(received);
    expect(voiceNote.transcript).toEqual({ status: 'done', text: 'Buy milk and call Bob.', seconds: 90 });
    expect(llm.transcriptions.requests).toEqual([{ model: 'whisper-1', fileName: 'voice.ogg', contentType: 'audio/ogg', size: bytes.length, responseFormat: 'verbose_json' }]);
    expect(voiceNote.saved.textPath).toBe('attachments/voice.ogg.txt');
    expect(readFileSync(join(workspace, 'attachments/voice.ogg.txt'), 'utf8')).toBe('Buy milk and call Bob.\n');
    // The model reads the words, and where the file and its transcript are.
    expect(transcriptLines([voiceNote])).toEqual(['[transcript of voice.ogg] Buy milk and call Bob.']);
    expect(modelLine(voiceNote)).toContain('saved in the workspace as attachments/voice.ogg; what it says is transcribed above, and saved in attachments/voice.ogg.txt]');
    expect(transcriptQuote([voiceNote])).toBe('🎤 "Buy milk and call Bob."');
    expect(await voice.secondsToday('test:ada')).toBe(90);
    expect(await voice.secondsToday()).toBe(90);
  });

  it('logs that audio was transcribed, never the key, the audio or what it says', async () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    const log = createLogger({ level: 'debug', pretty: false, destination });
    llm.transcriptions.set({ type: 'transcript', text: 'my secret plans', duration: 5 });
    await instance({}, dataDir, log).intake.receive(DM, message('1', VOICE));
    llm.transcriptions.set({ type: 'error', status: 500 });
    await instance({ model: 'whisper-2' }, dataDir, log).intake.receive(DM, message('2', VOICE));
    const text = lines.join('');
    expect(text).toContain('audio transcribed');
    expect(text).toContain('audio not transcribed');
    expect(text).not.toContain('sk-whisper');
    expect(text).not.toContain('secret plans');
    expect(text).not.toContain(bytes.subarray(0, 12).toString('base64'));
  });

  it('uses the default model endpoint and key, or its own key variable', () => {
    const llmConfig = parseConfig({ llm: { baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-main', transcription: { model: 'whisper-1' } } }).llm;
    expect(transcriptionEndpoint(llmConfig)).toEqual({ model: 'whisper-1', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-main', timeoutMs: 60_000 });
    const own = parseConfig({ llm: { apiKey: 'sk-main', transcription: { model: 'base.en', baseUrl: 'http://127.0.0.1:8/v1', apiKeyEnv: 'WHISPER_KEY' } } }).llm;
    expect(transcriptionEndpoint(own, { WHISPER_KEY: 'sk-own' })).toMatchObject({ baseUrl: 'http://127.0.0.1:8/v1', apiKey: 'sk-own' });
    expect(transcriptionEndpoint(parseConfig({}).llm)).toBeUndefined();
  });

  it('without an endpoint, the audio is saved untranscribed and the conversation is told once', async () => {
    const { intake, voice } = instance(undefined);
    const [first] = await intake.receive(DM, message('1', VOICE));
    expect(saved(first).transcript).toEqual({ status: 'off' });
    expect(modelLine(first!)).toContain('you cannot hear audio: no transcription service is set up here');
    expect(llm.transcriptions.requests).toEqual([]);
    expect(await voice.tellOff('test:ada', '1')).toBe(true);
    // The same message's turn run again after a restart tells it (the outbox sends it once); a later one does not.
    expect(await voice.tellOff('test:ada', '1')).toBe(true);
    expect(await voice.tellOff('test:ada', '2')).toBe(false);
    expect(transcriptionNotice([first!], { tellOff: true, hasText: true })).toBe(
      'I cannot listen to voice messages or audio here: no transcription service is set up. The rest of your message is answered.',
    );
    expect(transcriptionNotice([first!], { tellOff: false, hasText: true })).toBeUndefined();
  });

  it('a 500 from the endpoint is a failure the person is told, with no key or address in it', async () => {
    llm.transcriptions.set({ type: 'error', status: 500 });
    const { intake } = instance({});
    const [received] = await intake.receive(DM, message('1', VOICE));
    expect(saved(received).transcript).toEqual({ status: 'failed', why: 'the transcription service answered with an error (HTTP 500)' });
    expect(saved(received).saved.textPath).toBeUndefined();
    const notice = transcriptionNotice([received!], { tellOff: false, hasText: false });
    expect(notice).toBe('I could not transcribe voice.ogg: the transcription service answered with an error (HTTP 500).');
    expect(notice).not.toContain('127.0.0.1');
  });

  it('an endpoint that does not answer in time is given up', async () => {
    llm.transcriptions.set({ type: 'hang' });
    const { intake } = instance({ timeoutMs: 300 });
    const started = Date.now();
    const [received] = await intake.receive(DM, message('1', VOICE));
    expect(saved(received).transcript).toEqual({ status: 'failed', why: 'the transcription service did not answer in time' });
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('a turn run again after a restart, or another instance, reuses the transcript instead of transcribing again', async () => {
    llm.transcriptions.set({ type: 'transcript', text: 'Once only.', duration: 4 });
    const first = instance({});
    await first.intake.receive(DM, message('1', VOICE));
    // The process restarts and runs the same turn again: same disk, same store.
    const again = instance({});
    const [rerun] = await again.intake.receive(DM, message('1', VOICE));
    expect(saved(rerun).transcript).toMatchObject({ status: 'done', text: 'Once only.' });
    // Another instance with an empty disk fetches the file again and writes the transcript from the store.
    const otherDir = mkdtempSync(join(tmpdir(), 'pincer-voice-other-'));
    const other = instance({}, otherDir);
    await other.intake.restore(DM, [saved(rerun).saved]);
    expect(readFileSync(join(other.workspace, 'attachments/voice.ogg.txt'), 'utf8')).toBe('Once only.\n');
    expect(existsSync(join(other.workspace, 'attachments/voice.ogg'))).toBe(true);
    expect(llm.transcriptions.requests).toHaveLength(1);
    // Counted once.
    expect(await first.voice.secondsToday('test:ada')).toBe(4);
    rmSync(otherDir, { recursive: true, force: true });
  });

  it('quotes a long transcript cut short, and gives the model the whole of it', () => {
    const text = `${'word '.repeat(100)}end`;
    const received: ReceivedAttachment = {
      status: 'saved',
      saved: { source: VOICE, path: 'attachments/voice.ogg', userId: 'test:ada', kind: 'audio', mimeType: 'audio/ogg', sizeBytes: 10, sha256: 'x', textPath: 'attachments/voice.ogg.txt' },
      transcript: { status: 'done', text },
    };
    const quote = transcriptQuote([received])!;
    expect(quote.startsWith('🎤 "word word')).toBe(true);
    expect(quote.endsWith('…"')).toBe(true);
    expect(quote.length).toBeLessThan(210);
    expect(transcriptLines([received])[0]).toContain('end');
  });
});

describe('the name audio is sent under', () => {
  it('keeps a name the endpoint takes, and gives another the extension of its type', async () => {
    const { uploadName } = await import('../../../src/engine/attachments/transcribe.js');
    expect(uploadName('voice.ogg', 'audio/ogg')).toBe('voice.ogg');
    expect(uploadName('memo.m4a', 'audio/mp4')).toBe('memo.m4a');
    expect(uploadName('song.opus', 'audio/ogg')).toBe('song.opus.ogg');
    expect(uploadName('audio', 'audio/mpeg')).toBe('audio.mp3');
  });
});

describe('audio in containers video shares', () => {
  it('a WebM declared audio (a clip recorded in a browser) is audio, to be transcribed; undeclared, it stays video', async () => {
    expect(await sniffType(webm(), 'audio/webm', 'audio_message.webm')).toMatchObject({ kind: 'audio', mimeType: 'audio/webm' });
    expect(await sniffType(webm(), 'video/webm', 'clip.webm')).toMatchObject({ kind: 'video', mimeType: 'video/webm' });
  });
});
