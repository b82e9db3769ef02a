import { describe, expect, it } from 'vitest';
import { LlmConfigSchema } from '../../src/config/schema.js';
import { ModelCatalog } from '../../src/llm/models.js';
import type { LlmProvider } from '../../src/llm/types.js';

/** The default model's provider; never called here. */
const provider = (model: string): LlmProvider => ({ model, complete: () => Promise.reject(new Error('not called')) });

describe('which model sees images', () => {
  it('the default model sees with llm.vision, a listed one with its own vision; the conversation\'s choice decides', () => {
    const llm = LlmConfigSchema.parse({ model: 'main', vision: true, models: [{ name: 'text-only' }, { name: 'eyes', vision: true }] });
    const catalog = new ModelCatalog(llm, provider('main'));
    expect(catalog.seesImages(undefined)).toBe(true);
    expect(catalog.seesImages('text-only')).toBe(false);
    expect(catalog.seesImages('EYES')).toBe(true);
    // A choice no longer configured runs on the default.
    expect(catalog.seesImages('gone')).toBe(true);
  });

  it('sees nothing unless told: vision is off by default, and llm.vision speaks of the default model when it is listed too', () => {
    expect(new ModelCatalog(LlmConfigSchema.parse({ model: 'main' }), provider('main')).seesImages(undefined)).toBe(false);
    const listed = LlmConfigSchema.parse({ model: 'main', vision: true, models: [{ name: 'main' }, { name: 'other' }] });
    const catalog = new ModelCatalog(listed, provider('main'));
    expect(catalog.seesImages('main')).toBe(true);
    expect(catalog.seesImages('other')).toBe(false);
  });
});
