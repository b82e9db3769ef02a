import { afterEach, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from './server.js';

let fake: FakeLlm | undefined;

afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

/** A transcription request as a plain HTTP client (not the SDK) sends one. */
function transcribe(url: string, form: FormData): Promise<Response> {
  return fetch(`${url}/audio/transcriptions`, { method: 'POST', body: form });
}

describe('fake transcription endpoint', () => {
  it('parses the multipart body: the file (name, type, bytes) and the model, and answers what the test set', async () => {
    fake = await startFakeLlm();
    fake.transcriptions.set({ type: 'transcript', text: 'hello there', duration: 12.5 });
    const form = new FormData();
    form.append('model', 'whisper-1');
    form.append('response_format', 'verbose_json');
    form.append('file', new Blob([Buffer.from('\r\n--not a boundary\r\n'.repeat(10))], { type: 'audio/ogg' }), 'voice.ogg');
    const response = await transcribe(fake.url, form);
    expect(await response.json()).toMatchObject({ text: 'hello there', duration: 12.5 });
    expect(fake.transcriptions.requests).toEqual([{ model: 'whisper-1', fileName: 'voice.ogg', contentType: 'audio/ogg', size: 200, responseFormat: 'verbose_json' }]);
  });

  it('refuses a body without a file, and can fail with a status', async () => {
    fake = await startFakeLlm();
    const form = new FormData();
    form.append('model', 'whisper-1');
    expect((await transcribe(fake.url, form)).status).toBe(400);
    fake.transcriptions.set({ type: 'error', status: 503 });
    form.append('file', new Blob([Buffer.from('x')]), 'a.wav');
    const failed = await transcribe(fake.url, form);
    expect(failed.status).toBe(503);
    expect(await failed.json()).toMatchObject({ error: { type: 'server_error' } });
  });
});
