/**
 * `pincer console-link` against the built product: with the bot running and
 * the console on, it prints a link for the owner that signs in once; with the
 * console off it says how to turn it on.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from '../fakes/llm/server.js';
import { freePort } from '../support/ports.js';
import { ensureBuilt, MAIN } from './build.js';
import { baseEnv, cleanUp, startPincer, tempDir } from './pincer.js';

const run = promisify(execFile);

/** Runs `pincer console-link` with `env`; its exit code and output. */
async function consoleLink(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [MAIN, 'console-link'], { env, cwd: tempDir('pincer-e2e-cwd-') });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('pincer console-link', () => {
  let llm: FakeLlm;
  beforeAll(async () => {
    ensureBuilt();
    llm = await startFakeLlm();
    return () => llm.close();
  }, 180_000);
  afterEach(cleanUp);

  it('prints a one-use link for the owner of the running bot', async () => {
    const dataDir = tempDir();
    const configFile = join(tempDir(), 'pincer.yaml');
    writeFileSync(configFile, 'terminal:\n  enabled: on\nowners: [telegram:42]\nhttp:\n  host: 127.0.0.1\nconsole:\n  enabled: true\n');
    const env = { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: 'sk-test', PINCER_MODEL: 'fake-model', PINCER_CONFIG: configFile, PINCER_HTTP_PORT: String(await freePort()) };
    const pincer = startPincer(env, { dataDir });
    await pincer.waitForOutput('pincer is running');
    const printed = await consoleLink({ ...baseEnv(dataDir), ...env });
    expect(printed.code, printed.stderr).toBe(0);
    const link = /http:\/\/127\.0\.0\.1:\d+\/console\/sign-in\?t=[\w-]+/.exec(printed.stdout)?.[0];
    expect(link, printed.stdout).toBeDefined();
    const form = { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `t=${new URL(link!).searchParams.get('t')}`, redirect: 'manual' as const };
    expect((await fetch(new URL('/console/sign-in', link), form)).status).toBe(303);
    expect((await fetch(new URL('/console/sign-in', link), form)).status).toBe(403);
    pincer.child.stdin!.end();
    await pincer.waitForExit();
  }, 30_000);

  it('says how to turn the console on when it is off', async () => {
    const printed = await consoleLink({ ...baseEnv(tempDir()), OPENAI_API_KEY: 'sk-test', PINCER_MODEL: 'fake-model' });
    expect(printed.code).toBe(78);
    expect(printed.stderr).toContain('console.enabled: true');
  }, 30_000);
});
