/**
 * A small arithmetic language for the calculator: a tokenizer and a
 * recursive-descent parser that evaluates as it parses. No eval, no Function:
 * only numbers, the listed operators, functions and constants exist.
 *
 * Grammar (lowest precedence first):
 *   sum     := product (('+' | '-') product)*
 *   product := unary (('*' | '/' | '%') unary)*
 *   unary   := ('-' | '+') unary | power
 *   power   := primary ('^' unary)?          (right-associative; -2^2 = -4)
 *   primary := number | constant | name '(' sum (',' sum)* ')' | '(' sum ')'
 */
import { ToolError } from '../../../errors.js';

type Token =
  | { kind: 'number'; value: number; at: number }
  | { kind: 'name'; value: string; at: number }
  | { kind: 'op'; value: string; at: number }
  | { kind: 'end'; at: number };

const CONSTANTS: Record<string, number> = { pi: Math.PI, e: Math.E, tau: 2 * Math.PI };

/** Function name -> [min args, max args, implementation]. */
const FUNCTIONS: Record<string, [number, number, (...args: number[]) => number]> = {
  sqrt: [1, 1, Math.sqrt],
  abs: [1, 1, Math.abs],
  round: [1, 2, (x, digits = 0) => Math.round(x * 10 ** digits) / 10 ** digits],
  floor: [1, 1, Math.floor],
  ceil: [1, 1, Math.ceil],
  min: [1, 100, Math.min],
  max: [1, 100, Math.max],
  log: [1, 2, (x, base = 10) => Math.log(x) / Math.log(base)],
  ln: [1, 1, Math.log],
  exp: [1, 1, Math.exp],
  sin: [1, 1, Math.sin],
  cos: [1, 1, Math.cos],
  tan: [1, 1, Math.tan],
};

/** Nesting accepted before giving up (parentheses, unary signs, calls). */
const MAX_DEPTH = 200;

/** The names the calculator knows, for its description. */
export const KNOWN_FUNCTIONS = Object.keys(FUNCTIONS);

/**
 * Evaluates an expression. Throws ToolError naming the problem and its position.
 *
 * @example
 * evaluate('2 * (3 + 4) ^ 2') // 98
 */
export function evaluate(source: string): number {
  const parser = new Parser(tokenize(source));
  const value = parser.sum(0);
  parser.expectEnd();
  return value;
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const ch = source[i]!;
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    const number = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/.exec(source.slice(i, i + 64));
    if (number) {
      tokens.push({ kind: 'number', value: Number(number[0]), at: i });
      i += number[0].length;
      continue;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(source.slice(i, i + 64));
    if (name) {
      tokens.push({ kind: 'name', value: name[0].toLowerCase(), at: i });
      i += name[0].length;
      continue;
    }
    const op = ch === '*' && source[i + 1] === '*' ? '^' : ch;
    if (!'+-*/%^(),'.includes(op)) throw fail(`unexpected character ${JSON.stringify(ch)}`, i);
    tokens.push({ kind: 'op', value: op, at: i });
    i += ch === '*' && source[i + 1] === '*' ? 2 : 1;
  }
  tokens.push({ kind: 'end', at: source.length });
  return tokens;
}

class Parser {
  private index = 0;
  constructor(private readonly tokens: Token[]) {}

  sum(depth: number): number {
    let value = this.product(depth);
    while (this.isOp('+') || this.isOp('-')) {
      const op = this.takeOp().value;
      const right = this.product(depth);
      value = op === '+' ? value + right : value - right;
    }
    return value;
  }

  expectEnd(): void {
    const token = this.peek();
    if (token.kind !== 'end') throw fail(`unexpected "${describe(token)}"`, token.at);
  }

  private product(depth: number): number {
    let value = this.unary(depth);
    while (this.isOp('*') || this.isOp('/') || this.isOp('%')) {
      const op = this.takeOp();
      const right = this.unary(depth);
      if ((op.value === '/' || op.value === '%') && right === 0) throw fail('division by zero', op.at);
      value = op.value === '*' ? value * right : op.value === '/' ? value / right : value % right;
    }
    return value;
  }

  private unary(depth: number): number {
    if (depth > MAX_DEPTH) throw fail('expression nested too deeply', this.peek().at);
    if (this.isOp('-')) {
      this.next();
      return -this.unary(depth + 1);
    }
    if (this.isOp('+')) {
      this.next();
      return this.unary(depth + 1);
    }
    return this.power(depth);
  }

  private power(depth: number): number {
    const base = this.primary(depth);
    if (!this.isOp('^')) return base;
    this.next();
    return base ** this.unary(depth + 1);
  }

  private primary(depth: number): number {
    const token = this.next();
    if (token.kind === 'number') return token.value;
    if (token.kind === 'name') return this.named(token, depth);
    if (token.kind === 'op' && token.value === '(') {
      const value = this.sum(depth + 1);
      this.expect(')');
      return value;
    }
    throw fail(token.kind === 'end' ? 'the expression ends too early' : `unexpected "${describe(token)}"`, token.at);
  }

  private named(token: Extract<Token, { kind: 'name' }>, depth: number): number {
    // Own properties only: "constructor" or "__proto__" must not reach Object.prototype.
    const fn = Object.hasOwn(FUNCTIONS, token.value) ? FUNCTIONS[token.value] : undefined;
    if (!fn) {
      if (Object.hasOwn(CONSTANTS, token.value)) return CONSTANTS[token.value]!;
      throw fail(`unknown name "${token.value}" (functions: ${KNOWN_FUNCTIONS.join(', ')}; constants: pi, e, tau)`, token.at);
    }
    this.expect('(');
    const args = [this.sum(depth + 1)];
    while (this.isOp(',')) {
      this.next();
      args.push(this.sum(depth + 1));
    }
    this.expect(')');
    const [min, max, impl] = fn;
    if (args.length < min || args.length > max) {
      throw fail(`${token.value}() takes ${min === max ? min : `${min} to ${max}`} argument${max === 1 ? '' : 's'}, got ${args.length}`, token.at);
    }
    return impl(...args);
  }

  private expect(op: string): void {
    const token = this.next();
    if (token.kind !== 'op' || token.value !== op) {
      throw fail(token.kind === 'end' ? `missing "${op}"` : `expected "${op}" but found "${describe(token)}"`, token.at);
    }
  }

  private isOp(op: string): boolean {
    const token = this.peek();
    return token.kind === 'op' && token.value === op;
  }

  /** The next token, known to be an operator (checked with isOp). */
  private takeOp(): Extract<Token, { kind: 'op' }> {
    return this.next() as Extract<Token, { kind: 'op' }>;
  }

  private peek(): Token {
    return this.tokens[this.index]!;
  }

  private next(): Token {
    const token = this.tokens[this.index]!;
    if (token.kind !== 'end') this.index++;
    return token;
  }
}

function describe(token: Token): string {
  return token.kind === 'end' ? 'end' : String(token.value);
}

function fail(problem: string, at: number): ToolError {
  return new ToolError(`${problem} at position ${at + 1}.`);
}
