// @ts-check
/**
 * Compiles src/ into dist/ with the project's TypeScript (`npm run build`).
 * With `--if-stale` (what `npm start` runs first) it compiles only when dist/
 * is older than something the build reads, was never built, or its last
 * build failed, so that starting again after no change starts at once.
 *
 * The web console's page is bundled after the compile (console-build.mjs).
 *
 * A build that succeeds leaves dist/.built, dated when the build began; one
 * that fails leaves none, so the next start compiles again and shows the
 * errors rather than running what they left behind.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';
import { buildConsole } from './console-build.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');
const STAMP = join(DIST, '.built');
/** What the build reads: a change to any of these means compiling again. */
const INPUTS = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package.json'];

/**
 * The newest modification time at `path`: of the file, or of every file under the folder.
 * @param {string} path
 * @returns {number}
 */
function newestMtime(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((newest, name) => Math.max(newest, newestMtime(join(path, name))), stat.mtimeMs);
}

/**
 * Whether dist/ holds a successful build begun after the last change to what the build reads.
 * @returns {boolean}
 */
function isBuildFresh() {
  if (!existsSync(join(DIST, 'main.js')) || !existsSync(STAMP)) return false;
  return statSync(STAMP).mtimeMs >= Math.max(...INPUTS.map((input) => newestMtime(join(ROOT, input))));
}

/** Runs tsc on tsconfig.build.json, then bundles the console; throws when either fails (it has printed why). */
async function build() {
  // A source saved while tsc runs is newer than the stamp, so it is compiled next time.
  const began = new Date();
  rmSync(STAMP, { force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'inherit' });
  await buildConsole(join(DIST, 'console'));
  writeFileSync(STAMP, 'Written by scripts/build.mjs after a successful build; dated when it began.\n');
  utimesSync(STAMP, began, began);
}

if (!(process.argv.includes('--if-stale') && isBuildFresh())) {
  try {
    await build();
  } catch (error) {
    if (!(error instanceof Error && 'status' in error)) console.error(error);
    process.exit(1);
  }
}
