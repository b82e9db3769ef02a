/**
 * Files sent on Telegram, through grammY and the fake Bot API: fetched with
 * getFile and the file URL when the turn runs; the bot token in that URL
 * reaches no log, model request, message or stored history; and a download
 * that fails, stalls or is over Telegram's 20 MB gets an answer while the
 * text of the message is still answered.
 */
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.js';
import type { ConfigInput } from '../../../src/config/schema.js';
import { createTelegramDriver } from '../../scenarios/drivers/telegram.js';
import { startHarness, waitForMessage, type Harness } from '../../scenarios/harness.js';

const driver = createTelegramDriver();
const [, alice] = driver.users as [(typeof driver.users)[0], (typeof driver.users)[0]];
const notes = { name: 'notes.md', mimeType: 'text/markdown', bytes: Buffer.from('# Notes\nThe word is pelican.\n') };

/** Every file under `dir`, as text. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [readFileSync(path, 'latin1')];
  });
}

describe('telegram attachments', () => {
  let h: Harness | undefined;
  let logs: string[] = [];

  beforeAll(() => driver.setup(), 30_000);
  afterAll(() => driver.teardown(), 30_000);
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  const start = async (overrides: ConfigInput = {}) => {
    logs = [];
    // No secrets given to the logger: whatever is logged shows as it is.
    const destination = new Writable({ write: (chunk, _encoding, done) => void (logs.push(String(chunk)), done()) });
    h = await startHarness(driver, overrides, { log: createLogger({ level: 'debug', pretty: false, destination }) });
    return h;
  };

  it('fetches the file with getFile and the file URL; the token reaches no log, model, message or stored history', async () => {
    const harness = await start();
    const dm = harness.driver.dm(alice);
    await harness.driver.sendFile!(dm, alice, 'read attachments/notes.md', notes);
    await waitForMessage(harness, dm, /pelican/);
    const fake = driver.fake;
    expect(fake.calls.filter((call) => call.method === 'getFile')).toHaveLength(1);
    expect(fake.files.downloads).toHaveLength(1);
    const token = fake.token;
    expect(logs.join('')).not.toContain(token);
    expect(JSON.stringify(harness.llm.requests)).not.toContain(token);
    expect(harness.driver.messages(dm).map((m) => m.text).join('\n')).not.toContain(token);
    expect(filesUnder(harness.config.dataDir).some((text) => text.includes(token))).toBe(false);
    // The stored reference is the file_id: a restart fetches the file by it.
    expect(filesUnder(harness.config.dataDir).some((text) => text.includes('BQAC'))).toBe(true);
  });

  it('after a restart on a disk without the file, the next turn fetches it again by its stored reference', async () => {
    const harness = await start();
    const dm = harness.driver.dm(alice);
    await harness.driver.sendFile!(dm, alice, 'keep this', notes);
    await waitForMessage(harness, dm, 'echo: keep this');
    const downloads = driver.fake.files.downloads.length;
    rmSync(join(harness.config.dataDir, 'workspace'), { recursive: true, force: true });
    await harness.restart();
    await harness.driver.sendMessage(dm, alice, 'read attachments/notes.md');
    await waitForMessage(harness, dm, /pelican/);
    expect(driver.fake.files.downloads).toHaveLength(downloads + 1);
  });

  it('a download that fails is answered, with the reason, and the text of the message still is', async () => {
    const harness = await start();
    const dm = harness.driver.dm(alice);
    driver.fake.files.prepareNext({ failure: 'status-500' });
    await harness.driver.sendFile!(dm, alice, 'here is my file', notes);
    await waitForMessage(harness, dm, 'I could not take the attached file: notes.md could not be downloaded: the file server answered 500.');
    await waitForMessage(harness, dm, 'echo: here is my file');
    expect(logs.join('')).not.toContain(driver.fake.token);
  });

  it('a download that stalls times out with an answer, and the text is still answered', async () => {
    const harness = await start({ attachments: { downloadTimeoutMs: 1_000 } });
    const dm = harness.driver.dm(alice);
    driver.fake.files.prepareNext({ failure: 'hang' });
    await harness.driver.sendFile!(dm, alice, 'quick question', notes);
    await waitForMessage(harness, dm, 'notes.md took too long to download (over 1 s)');
    await waitForMessage(harness, dm, 'echo: quick question');
  });

  it("a file over Telegram's 20 MB is refused at its limit, whatever attachments.maxBytes says", async () => {
    const harness = await start({ attachments: { maxBytes: 50 * 1024 * 1024 } });
    const dm = harness.driver.dm(alice);
    driver.fake.files.prepareNext({ size: 25 * 1024 * 1024 });
    const downloads = driver.fake.files.downloads.length;
    await harness.driver.sendFile!(dm, alice, 'a big one', notes);
    await waitForMessage(harness, dm, 'notes.md is over the limit of 20 MB per file');
    await waitForMessage(harness, dm, 'echo: a big one');
    expect(driver.fake.files.downloads).toHaveLength(downloads);
  });
});
