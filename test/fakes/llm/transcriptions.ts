/**
 * The fake's `POST /v1/audio/transcriptions`, as OpenAI and whisper servers
 * speak it: a multipart/form-data body (parsed for real) with the audio
 * `file` and the `model`; the answer is JSON (`{ text }`), or with
 * `response_format=verbose_json` also the audio's `duration`. What it answers
 * is set by the test: a transcript, an HTTP error, or no answer at all.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** What the fake answers a transcription request. */
export type FakeTranscription = { type: 'transcript'; text: string; duration?: number } | { type: 'error'; status: number } | { type: 'hang' };

/** A transcription request as the fake received it. */
export interface FakeTranscriptionRequest {
  model: string;
  /** The file name of the `file` part. */
  fileName: string;
  /** Its declared type. */
  contentType: string;
  /** Its size in bytes. */
  size: number;
  responseFormat: string | undefined;
}

/** One part of a multipart/form-data body. */
export interface FormPart {
  name: string;
  fileName?: string;
  contentType?: string;
  body: Buffer;
}

/**
 * The parts of a multipart/form-data `body` (RFC 7578), or undefined when it
 * is not one.
 */
export function parseMultipart(body: Buffer, contentType: string | undefined): FormPart[] | undefined {
  const boundary = /^multipart\/form-data;.*\bboundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  const marker = boundary?.[1] ?? boundary?.[2];
  if (!marker) return undefined;
  const delimiter = Buffer.from(`--${marker}`);
  const parts: FormPart[] = [];
  let at = body.indexOf(delimiter);
  if (at < 0) return undefined;
  for (;;) {
    at += delimiter.length;
    // `--` after a delimiter ends the body.
    if (body.subarray(at, at + 2).toString() === '--') return parts;
    if (body.subarray(at, at + 2).toString() !== '\r\n') return undefined;
    const headersEnd = body.indexOf('\r\n\r\n', at);
    if (headersEnd < 0) return undefined;
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), headersEnd + 4);
    if (next < 0) return undefined;
    const headers = body.subarray(at + 2, headersEnd).toString('utf8').split('\r\n');
    const disposition = headers.find((line) => /^content-disposition:/i.test(line)) ?? '';
    const type = headers.find((line) => /^content-type:/i.test(line));
    const name = /\bname="([^"]*)"/.exec(disposition)?.[1];
    if (name === undefined) return undefined;
    const fileName = /\bfilename="([^"]*)"/.exec(disposition)?.[1];
    parts.push({
      name,
      ...(fileName !== undefined ? { fileName } : {}),
      ...(type ? { contentType: type.slice(type.indexOf(':') + 1).trim() } : {}),
      body: body.subarray(headersEnd + 4, next),
    });
    at = next + 2;
  }
}

/** The fake's transcription endpoint. */
export class FakeTranscriptions {
  /** Every request received, in order. */
  readonly requests: FakeTranscriptionRequest[] = [];
  private answer: FakeTranscription = { type: 'transcript', text: 'hello from a voice message', duration: 3 };

  /** What the next requests are answered. */
  set(answer: FakeTranscription): void {
    this.answer = answer;
  }

  /** Serves one request. */
  async serve(req: IncomingMessage, res: ServerResponse, send: (status: number, body: unknown) => void): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const parts = parseMultipart(Buffer.concat(chunks), req.headers['content-type']);
    const field = (name: string) => parts?.find((part) => part.name === name);
    const file = field('file');
    const model = field('model')?.body.toString('utf8');
    if (!parts || !file || file.fileName === undefined || !model) {
      return send(400, { error: { message: "Missing required parameters: 'file' and 'model'.", type: 'invalid_request_error', param: null, code: null } });
    }
    const responseFormat = field('response_format')?.body.toString('utf8');
    this.requests.push({ model, fileName: file.fileName, contentType: file.contentType ?? '', size: file.body.length, responseFormat });
    const answer = this.answer;
    if (answer.type === 'hang') return;
    if (answer.type === 'error') return send(answer.status, { error: { message: `fake transcription error ${answer.status}`, type: 'server_error', param: null, code: null } });
    if (responseFormat === 'verbose_json') {
      return send(200, { task: 'transcribe', language: 'english', duration: answer.duration ?? 0, text: answer.text, segments: [] });
    }
    send(200, { text: answer.text });
  }
}
