import { describe, expect, it } from 'vitest';
import { MAX_TOOL_NAME, modelToolNames } from '../../src/mcp/names.js';
import { resultText } from '../../src/mcp/results.js';

describe('MCP tool names', () => {
  it('are <server>__<tool>, sanitised and at most 64 characters', () => {
    expect(modelToolNames('web', ['get-sum', 'read.file', 'ünïcode tool'])).toEqual(['web__get-sum', 'web__read_file', 'web___n_code_tool']);
    const long = modelToolNames('server', ['x'.repeat(100)])[0]!;
    expect(long).toHaveLength(MAX_TOOL_NAME);
  });

  it('resolve collisions deterministically', () => {
    const first = modelToolNames('s', ['a.b', 'a_b']);
    expect(first[0]).toBe('s__a_b');
    expect(first[1]).toMatch(/^s__a_b_[0-9a-f]{6}$/);
    expect(modelToolNames('s', ['a.b', 'a_b'])).toEqual(first);
    const long = modelToolNames('s', [`${'y'.repeat(70)}1`, `${'y'.repeat(70)}2`]);
    expect(long[0]).not.toBe(long[1]);
    expect(long.every((name) => name.length <= MAX_TOOL_NAME)).toBe(true);
  });
});

describe('MCP results as text', () => {
  it('keeps text and summarises images, audio and resources', () => {
    const png = Buffer.alloc(2048).toString('base64');
    expect(
      resultText([
        { type: 'text', text: 'hello' },
        { type: 'image', data: png, mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'abc' } },
        { type: 'resource_link', uri: 'file:///b.bin', name: 'b.bin', mimeType: 'application/octet-stream' },
      ]),
    ).toBe('hello\n[image: image/png, 2.0 KB]\n[resource: file:///a.txt (text/plain), 3 characters]\nabc\n[resource link: b.bin file:///b.bin (application/octet-stream)]');
    expect(resultText([], { total: 3 })).toBe('{"total":3}');
    expect(resultText(undefined)).toBe('(no content)');
  });
});
