import { describe, expect, it } from 'vitest';
import { CallCyclesDetector } from '../../../src/engine/guards/call-cycles.js';
import { seeCall } from '../../../src/engine/guards/observed-call.js';

const step = (name: string, args: Record<string, unknown> = {}) => seeCall({ name, arguments: JSON.stringify(args), ok: true });
const tools = ['A', 'B', 'C', 'D', 'E', 'F'].map((name) => step(`tool_${name}`));

/** Findings at each call, '-' for none. */
function findings(calls: ReturnType<typeof seeCall>[], maxLength = 5): string[] {
  const detector = new CallCyclesDetector(maxLength);
  return calls.map((call) => detector.see(call)?.summary ?? '-');
}

describe('cycles', () => {
  for (let k = 2; k <= 5; k++) {
    it(`finds a cycle of ${k} calls at the end of its second round, not before`, () => {
      const cycle = tools.slice(0, k);
      const result = findings([...cycle, ...cycle]);
      expect(result.slice(0, -1).every((f) => f === '-')).toBe(true);
      expect(result.at(-1)).toBe(`the cycle ${cycle.map((c) => c.call.name).join(' → ')}, twice in a row.`);
    });
  }

  it('does not look for cycles longer than the maximum (6 calls twice, maximum 5)', () => {
    expect(findings([...tools, ...tools]).every((f) => f === '-')).toBe(true);
  });

  it('leaves one call repeated (A,A,A,A) to the similar-calls detector', () => {
    const a = tools[0]!;
    expect(findings([a, a, a, a, a, a]).every((f) => f === '-')).toBe(true);
  });

  it('finds a cycle of one tool with different arguments and shows the arguments', () => {
    const a = step('files_read', { path: 'a.txt' });
    const b = step('files_read', { path: 'b.txt' });
    expect(findings([a, b, a, b]).at(-1)).toBe('the cycle files_read with path "a.txt" → files_read with path "b.txt", twice in a row.');
  });

  it('names only the calls of the cycle, not those before it', () => {
    const [a, b, c] = tools;
    expect(findings([c!, a!, b!, a!, b!]).at(-1)).toBe('the cycle tool_A → tool_B, twice in a row.');
  });

  it('does not see a cycle in calls that only resemble one', () => {
    const [a, b, c] = tools;
    expect(findings([a!, b!, a!, c!, a!, b!]).every((f) => f === '-')).toBe(true);
  });

  it('forgets the calls on reset', () => {
    const detector = new CallCyclesDetector(5);
    const [a, b] = tools;
    for (const call of [a!, b!, a!]) detector.see(call);
    detector.reset();
    expect(detector.see(b!)).toBeUndefined();
  });
});
