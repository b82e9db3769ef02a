/**
 * Builds the product once (`npm run build` into dist/) unless dist/main.js is
 * newer than every source file. Test files run in parallel worker processes,
 * so a lock folder in the temp dir makes sure only one of them runs tsc.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The built entry point, as the Procfile runs it. */
export const MAIN = join(ROOT, 'dist', 'main.js');

const BUILD_TIMEOUT_MS = 120_000;
const LOCK = join(tmpdir(), `pincer-e2e-build-${Buffer.from(ROOT).toString('hex').slice(-24)}.lock`);

/** The newest modification time under `dir` (files only). */
function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Whether dist/main.js was built after the last change to src/ or the build settings. */
export function isBuildFresh(): boolean {
  if (!existsSync(MAIN)) return false;
  const inputs = Math.max(
    newestMtime(join(ROOT, 'src')),
    statSync(join(ROOT, 'tsconfig.json')).mtimeMs,
    statSync(join(ROOT, 'tsconfig.build.json')).mtimeMs,
  );
  return statSync(MAIN).mtimeMs >= inputs;
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Takes the build lock, waiting for another worker's build; a lock older than the build timeout is stale. */
function acquireLock(): void {
  const deadline = Date.now() + BUILD_TIMEOUT_MS + 10_000;
  for (;;) {
    try {
      mkdirSync(LOCK);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    try {
      if (Date.now() - statSync(LOCK).mtimeMs > BUILD_TIMEOUT_MS) rmSync(LOCK, { recursive: true, force: true });
    } catch {
      // Released meanwhile.
    }
    if (Date.now() > deadline) throw new Error(`e2e: timed out waiting for the build lock ${LOCK}`);
    sleepSync(200);
  }
}

/** Runs `npm run build` when dist/ is missing or older than src/; safe to call from every test file. */
export function ensureBuilt(): void {
  if (isBuildFresh()) return;
  acquireLock();
  try {
    if (isBuildFresh()) return;
    try {
      execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'pipe', timeout: BUILD_TIMEOUT_MS });
    } catch (error) {
      const failed = error as { stdout?: Buffer; stderr?: Buffer; message: string };
      throw new Error(`npm run build failed: ${failed.message}\n${failed.stdout?.toString() ?? ''}${failed.stderr?.toString() ?? ''}`);
    }
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}
