/**
 * The `.env` file of the working folder, read at start as the README and
 * `.gitignore` suggest. Node's own parser reads it; a variable already set in
 * the environment keeps its value.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** What reading `.env` did. */
export interface DotEnvResult {
  /** The file read, when there was one. */
  path?: string;
  /** Why it could not be read. */
  error?: string;
}

/** Reads `<folder>/.env` into `process.env` without overriding what is set. */
export function loadDotEnv(folder: string): DotEnvResult {
  const path = join(folder, '.env');
  if (!existsSync(path)) return {};
  try {
    process.loadEnvFile(path);
    return { path };
  } catch (error) {
    return { path, error: `could not read ${path}: ${error instanceof Error ? error.message : String(error)}` };
  }
}
