import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { LlmConfigSchema } from '../../src/config/schema.js';
import { OpenAiProvider } from '../../src/llm/openai-provider.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

/** A server that ignores `stream: true` and always answers with one JSON body, as some local servers do. */
async function jsonOnlyServer(streamFlags: boolean[]): Promise<string> {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      streamFlags.push(Boolean((JSON.parse(body) as { stream?: boolean }).stream));
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          id: 'c1',
          object: 'chat.completion',
          created: 1,
          model: 'local',
          choices: [{ index: 0, message: { role: 'assistant', content: 'hello from json' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}/v1`;
}

it('gets the answer from an endpoint that does not stream, and stops asking it to', async () => {
  const flags: boolean[] = [];
  const baseUrl = await jsonOnlyServer(flags);
  const provider = new OpenAiProvider(LlmConfigSchema.parse({ baseUrl, model: 'local', maxRetries: 0 }));
  const deltas: string[] = [];
  const first = await provider.complete({ messages: [{ role: 'user', content: 'hi' }], onTextDelta: (d) => deltas.push(d) });
  expect(first.content).toBe('hello from json');
  expect(deltas.join('')).toBe('hello from json');
  const second = await provider.complete({ messages: [{ role: 'user', content: 'again' }], onTextDelta: () => undefined });
  expect(second.content).toBe('hello from json');
  expect(flags).toEqual([true, false, false]);
});
