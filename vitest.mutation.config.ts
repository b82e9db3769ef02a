import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * The test files of one mutation run, chosen by stryker.config.mjs and passed in PINCER_MUTATION_TESTS
 * (comma-separated globs). Narrowing here rather than with Stryker's own `testFiles` keeps the mutants of
 * module-level values (patterns, lists, constants) active when their module loads.
 */
const include = (process.env.PINCER_MUTATION_TESTS ?? '').split(',').filter(Boolean);

export default defineConfig({ ...base, test: { ...base.test, include: include.length > 0 ? include : base.test?.include } });
