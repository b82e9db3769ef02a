/**
 * A 404 from the model endpoint: usually a base URL without its `/v1`, so the
 * error names the URL tried (without credentials) and says to check for `/v1`;
 * a model the server does not have says so instead. The fake server answers an
 * unknown path with 404, as OpenAI does.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { failureMessage } from '../../src/engine/failures.js';
import { LlmConfigSchema } from '../../src/config/schema.js';
import { LlmError } from '../../src/errors.js';
import { OpenAiProvider } from '../../src/llm/openai-provider.js';
import { errorReply, startFakeLlm, textReply, type FakeLlm } from '../fakes/llm/server.js';

let fake: FakeLlm;
beforeEach(async () => {
  fake = await startFakeLlm();
});
afterEach(async () => {
  await fake.close();
});

async function failureFrom(baseUrl: string): Promise<LlmError> {
  const provider = new OpenAiProvider(LlmConfigSchema.parse({ baseUrl, model: 'fake-model', maxRetries: 2, retryBaseDelayMs: 10 }));
  const error = await provider.complete({ messages: [{ role: 'user', content: 'hello' }] }).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(LlmError);
  return error as LlmError;
}

describe('a 404 from the model endpoint', () => {
  it('names the URL tried and asks to check that the base URL ends in /v1', async () => {
    fake.enqueue(textReply('never reached'));
    const root = fake.url.replace(/\/v1$/, '');
    const error = await failureFrom(root);
    expect(error.status).toBe(404);
    expect(error.retryable).toBe(false);
    expect(error.message).toContain(`at ${root}/chat/completions`);
    expect(error.message).toContain('check that the base URL (OPENAI_BASE_URL, llm.baseUrl) ends in /v1');
    expect(failureMessage(error)).toContain('base URL ends in /v1');
  });

  it('says the model is missing, not the /v1, when the server says so', async () => {
    fake.enqueue(errorReply(404, { message: 'The model `fake-model` does not exist or you do not have access to it.', type: 'invalid_request_error', code: 'model_not_found' }));
    const error = await failureFrom(fake.url);
    expect(error.status).toBe(404);
    expect(error.message).toContain('does not have the model');
    expect(error.message).toContain('PINCER_MODEL');
    expect(error.message).not.toContain('/v1');
  });
});
