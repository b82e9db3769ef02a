import { describe, expect, it } from 'vitest';
import { ToolError } from '../../../src/errors.js';
import { calculatorTool } from '../../../src/tools/builtin/calculator.js';
import { evaluate } from '../../../src/tools/builtin/lib/expression.js';
import { makeContext } from '../support.js';

describe('expression evaluator', () => {
  it.each([
    ['1 + 2 * 3', 7],
    ['(1 + 2) * 3', 9],
    ['10 / 4', 2.5],
    ['10 % 4', 2],
    ['2 ^ 3 ^ 2', 512],
    ['2 ** 10', 1024],
    ['-2 ^ 2', -4],
    ['(-2) ^ 2', 4],
    ['--3', 3],
    ['-(4 - 6) * +2', 4],
    ['sqrt(16) + abs(-3)', 7],
    ['round(2.567, 2)', 2.57],
    ['floor(2.9) + ceil(2.1)', 5],
    ['min(3, 1, 2) + max(3, 1, 2)', 4],
    ['log(1000)', 3],
    ['log(8, 2)', 3],
    ['ln(e)', 1],
    ['sin(0) + cos(0) + tan(0)', 1],
    ['2 * pi', 2 * Math.PI],
    ['1.5e3 + .5', 1500.5],
    ['  7  ', 7],
  ])('%s = %d', (expression, expected) => {
    expect(evaluate(expression)).toBeCloseTo(expected, 10);
  });

  it.each([
    ['1 +', 'the expression ends too early at position 4.'],
    ['(1 + 2', 'missing ")" at position 7.'],
    ['1 + 2)', 'unexpected ")" at position 6.'],
    ['2 $ 3', 'unexpected character "$" at position 3.'],
    ['1 / 0', 'division by zero at position 3.'],
    ['5 % 0', 'division by zero at position 3.'],
    ['foo(1)', 'unknown name "foo" (functions: sqrt, abs, round, floor, ceil, min, max, log, ln, exp, sin, cos, tan; constants: pi, e, tau) at position 1.'],
    ['sqrt(1, 2)', 'sqrt() takes 1 argument, got 2 at position 1.'],
    ['sqrt 4', 'expected "(" but found "4" at position 6.'],
    ['process.exit(1)', 'unexpected character "." at position 8.'],
    ['__proto__', 'unknown name "__proto__" (functions: sqrt, abs, round, floor, ceil, min, max, log, ln, exp, sin, cos, tan; constants: pi, e, tau) at position 1.'],
    ['constructor', 'unknown name "constructor" (functions: sqrt, abs, round, floor, ceil, min, max, log, ln, exp, sin, cos, tan; constants: pi, e, tau) at position 1.'],
    ['1 2', 'unexpected "2" at position 3.'],
  ])('%j is refused: %s', (expression, message) => {
    expect(() => evaluate(expression)).toThrow(new ToolError(message));
  });

  it('refuses absurd nesting instead of overflowing the stack', () => {
    expect(() => evaluate(`${'('.repeat(5000)}1${')'.repeat(5000)}`)).toThrow(/nested too deeply/);
    expect(() => evaluate(`${'-'.repeat(5000)}1`)).toThrow(/nested too deeply/);
  });
});

describe('calculator tool', () => {
  const tool = calculatorTool();

  it('answers with the expression and a tidy result', async () => {
    expect(await tool.execute({ expression: '0.1 + 0.2' }, makeContext())).toBe('0.1 + 0.2 = 0.3');
    expect(await tool.execute({ expression: '2^0.5' }, makeContext())).toBe('2^0.5 = 1.41421356237');
  });

  it('refuses results that are not finite', async () => {
    await expect(tool.execute({ expression: '10 ^ 400' }, makeContext())).rejects.toThrow('the result is not a finite number (Infinity).');
    await expect(tool.execute({ expression: 'sqrt(-1)' }, makeContext())).rejects.toThrow('the result is not a finite number (NaN).');
  });

  it('never needs approval and only reads', () => {
    expect(tool.requiresApproval({ expression: '1' })).toBe('never');
    expect(tool.readOnly).toBe(true);
  });
});
