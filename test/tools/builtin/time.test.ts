import { describe, expect, it } from 'vitest';
import { timeTool } from '../../../src/tools/builtin/time.js';
import { makeContext } from '../support.js';

const fixed = Date.UTC(2025, 0, 15, 12, 30, 0);

describe('time tool', () => {
  const tool = timeTool(() => fixed);

  it('gives UTC by default', async () => {
    const out = await tool.execute({}, makeContext());
    expect(out.split('\n')[0]).toBe('2025-01-15T12:30:00.000Z (UTC)');
    expect(out).toMatch(/Wednesday, 15 January 2025 at 12:30:00 (UTC|GMT) \(UTC\)$/);
  });

  it('gives the time in an IANA zone', async () => {
    const out = await tool.execute({ timezone: 'Asia/Tokyo' }, makeContext());
    expect(out).toMatch(/Wednesday, 15 January 2025 at 21:30:00 GMT\+9 \(Asia\/Tokyo\)$/);
  });

  it('refuses an unknown zone with a hint', async () => {
    await expect(tool.execute({ timezone: 'Mars/Olympus' }, makeContext())).rejects.toThrow(
      'unknown time zone "Mars/Olympus". Use an IANA name such as "Europe/Berlin" or "Asia/Tokyo".',
    );
  });
});
