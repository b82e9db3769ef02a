/** Types of console-build.mjs, for the tests that build the console's bundle. */
export function buildConsole(outDir?: string): Promise<{ script: string; css: string }>;
