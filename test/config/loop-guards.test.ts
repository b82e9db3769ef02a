import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { DEFAULT_LOOP_GUARDS } from '../../src/config/schema.js';
import { ConfigError } from '../../src/errors.js';

describe('agent.loopGuards', () => {
  it('defaults to the thresholds of the product contract', () => {
    expect(parseConfig({}).agent.loopGuards).toEqual({
      similarity: 0.8,
      similarCallLimit: 3,
      windowSize: 10,
      windowRepeats: 3,
      maxCycleLength: 5,
      consecutiveFailures: 5,
      maxContinuations: 3,
      verifyActions: true,
      selfCheck: false,
    });
    expect(parseConfig({}).agent.loopGuards).toEqual(DEFAULT_LOOP_GUARDS);
  });

  it('keeps the defaults of the keys a file leaves out', () => {
    const guards = parseConfig({ agent: { loopGuards: { similarCallLimit: 5, selfCheck: true } } }).agent.loopGuards;
    expect(guards).toMatchObject({ similarCallLimit: 5, selfCheck: true, similarity: 0.8, windowSize: 10 });
  });

  it('refuses values out of range and unknown keys', () => {
    expect(() => parseConfig({ agent: { loopGuards: { similarity: 0.4 } } })).toThrow(ConfigError);
    expect(() => parseConfig({ agent: { loopGuards: { maxContinuations: 11 } } })).toThrow(ConfigError);
    expect(() => parseConfig({ agent: { loopGuards: { windowSise: 10 } } })).toThrow(/windowSize/);
  });
});
