/**
 * Tool parameter schemas as the model sees them: zod 4 schemas converted to
 * JSON Schema, describing the input (fields with defaults are optional).
 */
import { z } from 'zod';

/** A JSON Schema object. */
export type JsonSchema = Record<string, unknown>;

/** The JSON Schema of a tool's parameters, without the `$schema` key providers reject. */
export function toolParametersSchema(schema: z.ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  delete json.$schema;
  return json;
}
