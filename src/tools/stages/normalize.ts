/**
 * Argument normalisation: the model's raw argument text becomes a JSON object,
 * and values that the model wrote as strings ("42", "true", "[1,2]") are
 * turned into what the tool's JSON Schema asks for.
 */
import type { JsonSchema } from '../schema.js';

/** Plain arguments, before validation. */
export type Params = Record<string, unknown>;

/** The arguments as an object, or the error text the model reads. */
export type NormalizeOutcome = { ok: true; params: Params } | { ok: false; error: string };

/** Nesting followed when coercing; deeper values are left as they are for validation to judge. */
const MAX_DEPTH = 32;
/** Characters of a JSON parser message kept: it may quote the input. */
const MAX_PARSER_MESSAGE = 160;

/**
 * Parses and coerces a call's arguments. Empty text means no arguments.
 *
 * @example
 * normalizeArguments('calculator', '{"expression": 2}', schema) // coerced per schema
 */
export function normalizeArguments(tool: string, raw: unknown, schema: JsonSchema): NormalizeOutcome {
  const parsed = parseArguments(tool, raw);
  if (!parsed.ok) return parsed;
  return { ok: true, params: coerceParams(parsed.params, schema) };
}

/** Coerces already parsed arguments (for instance after a hook rewrote them). */
export function coerceParams(params: Params, schema: JsonSchema): Params {
  const coerced = coerceValue(params, schema, 0);
  return isPlainObject(coerced) ? coerced : params;
}

function parseArguments(tool: string, raw: unknown): NormalizeOutcome {
  if (raw === undefined || raw === null) return { ok: true, params: {} };
  if (isPlainObject(raw)) return { ok: true, params: raw };
  if (typeof raw !== 'string') return notAnObject(tool, raw);
  if (raw.trim() === '') return { ok: true, params: {} };
  let value: unknown;
  try {
    value = JSON.parse(raw);
    // Some models encode the arguments twice: a JSON string holding the JSON object.
    if (typeof value === 'string' && value.trim().startsWith('{')) value = JSON.parse(value);
  } catch (error) {
    const reason = (error as Error).message.slice(0, MAX_PARSER_MESSAGE);
    return { ok: false, error: `Error: the arguments for "${tool}" are not valid JSON (${reason}). Send one JSON object.` };
  }
  if (value === null) return { ok: true, params: {} };
  return isPlainObject(value) ? { ok: true, params: value } : notAnObject(tool, value);
}

function notAnObject(tool: string, value: unknown): NormalizeOutcome {
  const kind = Array.isArray(value) ? 'an array' : `a ${typeof value}`;
  return { ok: false, error: `Error: the arguments for "${tool}" must be a JSON object, not ${kind}.` };
}

function coerceValue(value: unknown, schema: JsonSchema | undefined, depth: number): unknown {
  if (!schema || depth > MAX_DEPTH) return value;
  const types = typesOf(schema);
  if (typeof value === 'string') return coerceString(value, schema, types, depth);
  if (Array.isArray(value)) {
    const items = memberFor(schema, 'array')?.items as JsonSchema | undefined;
    return items ? value.map((item) => coerceValue(item, items, depth + 1)) : value;
  }
  if (isPlainObject(value)) return coerceObject(value, memberFor(schema, 'object'), depth);
  return value;
}

function coerceString(value: string, schema: JsonSchema, types: Set<string>, depth: number): unknown {
  if (types.size === 0 || types.has('string')) return value;
  const text = value.trim();
  if ((types.has('number') || types.has('integer')) && text !== '' && Number.isFinite(Number(text))) return Number(text);
  if (types.has('boolean') && /^(true|false)$/i.test(text)) return text.toLowerCase() === 'true';
  if (types.has('null') && text === 'null') return null;
  if ((types.has('array') && text.startsWith('[')) || (types.has('object') && text.startsWith('{'))) {
    try {
      return coerceValue(JSON.parse(text), schema, depth + 1);
    } catch {
      return value;
    }
  }
  return value;
}

function coerceObject(value: Params, schema: JsonSchema | undefined, depth: number): Params {
  const properties = schema?.properties as Record<string, JsonSchema> | undefined;
  if (!properties) return value;
  const out: Params = { ...value };
  for (const [key, propertySchema] of Object.entries(properties)) {
    if (Object.hasOwn(out, key)) out[key] = coerceValue(out[key], propertySchema, depth + 1);
  }
  return out;
}

/** The JSON types a schema accepts, looking one level into anyOf / oneOf. */
function typesOf(schema: JsonSchema): Set<string> {
  const types = new Set<string>();
  for (const member of [schema, ...alternatives(schema)]) {
    const type = member.type;
    if (typeof type === 'string') types.add(type);
    if (Array.isArray(type)) for (const t of type) if (typeof t === 'string') types.add(t);
  }
  return types;
}

/** The schema (itself or one of its alternatives) that describes values of JSON type `type`. */
function memberFor(schema: JsonSchema, type: string): JsonSchema | undefined {
  return [schema, ...alternatives(schema)].find((member) => typesOf({ type: member.type }).has(type));
}

function alternatives(schema: JsonSchema): JsonSchema[] {
  const list = [schema.anyOf, schema.oneOf].find(Array.isArray) as unknown[] | undefined;
  return (list ?? []).filter(isPlainObject);
}

function isPlainObject(value: unknown): value is Params {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
