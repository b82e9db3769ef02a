/**
 * The `calculator` tool: evaluates arithmetic exactly as written, so the model
 * does not have to do sums in its head.
 */
import { z } from 'zod';
import { ToolError } from '../../errors.js';
import type { Tool } from '../types.js';
import { evaluate, KNOWN_FUNCTIONS } from './lib/expression.js';

const parameters = z.object({
  expression: z
    .string()
    .min(1)
    .max(1000)
    .describe('Arithmetic expression, e.g. "2 * (3 + 4) ^ 2" or "sqrt(2) * pi"'),
});

/** Creates the calculator tool. */
export function calculatorTool(): Tool<typeof parameters> {
  return {
    name: 'calculator',
    description:
      `Evaluate an arithmetic expression: + - * / % ^ and parentheses, functions ${KNOWN_FUNCTIONS.join(', ')}, ` +
      'constants pi and e. Angles are in radians.',
    parameters,
    readOnly: true,
    requiresApproval: () => 'never',
    timeoutMs: 5_000,
    async execute({ expression }) {
      const value = evaluate(expression);
      if (!Number.isFinite(value)) throw new ToolError(`the result is not a finite number (${String(value)}).`);
      return `${expression} = ${formatNumber(value)}`;
    },
  };
}

/** Twelve significant digits: hides binary rounding noise such as 0.1 + 0.2 = 0.30000000000000004. */
export function formatNumber(value: number): string {
  return String(Number(value.toPrecision(12)));
}
