import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeLlm, textOf, textReply, toolCallReply, type FakeLlm } from './server.js';

let fake: FakeLlm | undefined;

afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

function dataLines(sse: string): string[] {
  return sse.split('\n\n').filter(Boolean).map((event) => event.replace(/^data: /, ''));
}

describe('fake LLM server', () => {
  it('streams SSE chunks with tool-call fragments, a finish chunk, usage and [DONE]', async () => {
    fake = await startFakeLlm({ script: [toolCallReply([{ id: 'c1', name: 'search', arguments: { q: 'abc' } }], { chunkSize: 3 })] });
    const response = await post(fake.url, { model: 'm', messages: [], stream: true, stream_options: { include_usage: true } });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const lines = dataLines(await response.text());
    expect(lines.at(-1)).toBe('[DONE]');
    const chunks = lines.slice(0, -1).map((line) => JSON.parse(line) as { choices: Array<{ delta: { tool_calls?: Array<{ index: number; id?: string; function: { name?: string; arguments: string } }> }; finish_reason: string | null }>; usage?: unknown });
    const fragments = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
    expect(fragments[0]).toMatchObject({ index: 0, id: 'c1', function: { name: 'search', arguments: '' } });
    expect(fragments.length).toBeGreaterThan(3);
    expect(fragments.map((fragment) => fragment.function.arguments).join('')).toBe('{"q":"abc"}');
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 5 } });
  });

  it('sends no usage chunk unless asked', async () => {
    fake = await startFakeLlm({ script: [textReply('hi')] });
    const lines = dataLines(await (await post(fake.url, { model: 'm', messages: [], stream: true })).text());
    expect(lines.some((line) => line.includes('"usage"'))).toBe(false);
  });

  it('works with the real SDK, records requests and lists models', async () => {
    fake = await startFakeLlm({ script: [textReply('hello', { usage: { prompt_tokens: 3, completion_tokens: 1, cached_tokens: 2 } })], models: ['a', 'b'] });
    const client = new OpenAI({ baseURL: fake.url, apiKey: 'k', maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: 'a', messages: [{ role: 'user', content: 'hi' }] });
    expect(completion.choices[0]!.message.content).toBe('hello');
    expect(completion.usage?.prompt_tokens_details?.cached_tokens).toBe(2);
    expect(fake.requests).toEqual([{ model: 'a', messages: [{ role: 'user', content: 'hi' }] }]);
    const models = await client.models.list();
    expect(models.data.map((model) => model.id)).toEqual(['a', 'b']);
  });

  it('records the image parts a request carries, decoded, with the message they came in', async () => {
    fake = await startFakeLlm({ script: [textReply('a cat')] });
    const client = new OpenAI({ baseURL: fake.url, apiKey: 'k', maxRetries: 0 });
    const png = Buffer.from('89504e470d0a1a0a', 'hex');
    await client.chat.completions.create({
      model: 'a',
      messages: [
        { role: 'system', content: 'see' },
        { role: 'user', content: [{ type: 'text', text: 'what is it?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } }, { type: 'image_url', image_url: { url: 'https://example.com/a.jpg' } }] },
      ],
    });
    expect(fake.images).toEqual([
      { request: 0, message: 1, mimeType: 'image/png', bytes: png },
      { request: 0, message: 1, mimeType: '', bytes: Buffer.alloc(0), url: 'https://example.com/a.jpg' },
    ]);
    expect(textOf(fake.requests[0]!.messages[1]!.content)).toBe('what is it?');
  });

  it('answers from the responder once the script is used up, and 400 without one', async () => {
    fake = await startFakeLlm({ script: [textReply('scripted')] });
    const first = (await (await post(fake.url, { model: 'm', messages: [] })).json()) as { choices: Array<{ message: { content: string } }> };
    expect(first.choices[0]!.message.content).toBe('scripted');
    const exhausted = await post(fake.url, { model: 'm', messages: [] });
    expect(exhausted.status).toBe(400);
    fake.setResponder((request, index) => textReply(`#${index} for ${request.model}`));
    const dynamic = (await (await post(fake.url, { model: 'x', messages: [] })).json()) as { choices: Array<{ message: { content: string } }> };
    expect(dynamic.choices[0]!.message.content).toBe('#2 for x');
  });

  it('requires the API key when configured with one', async () => {
    fake = await startFakeLlm({ apiKey: 'right', script: [textReply('ok')] });
    expect((await post(fake.url, { model: 'm', messages: [] }, { authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await post(fake.url, { model: 'm', messages: [] }, { authorization: 'Bearer right' })).status).toBe(200);
  });

  it('requires the API key for the model list too', async () => {
    fake = await startFakeLlm({ apiKey: 'right' });
    expect((await fetch(`${fake.url}/models`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await fetch(`${fake.url}/models`, { headers: { authorization: 'Bearer right' } })).status).toBe(200);
  });

  it('answers 404 for the model list of a server that has none', async () => {
    fake = await startFakeLlm({ models: null });
    expect((await fetch(`${fake.url}/models`)).status).toBe(404);
  });
});
