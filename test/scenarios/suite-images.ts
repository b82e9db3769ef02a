/**
 * The image scenarios of the shared suite (SPEC section 17): a picture sent
 * with a question reaches a model that sees as an image part, downscaled; a
 * model that does not see is told in one line; the conversation's current
 * model decides; only the latest turns' images are sent again; and a restart
 * before the model saw the picture still shows it, fetched again by its
 * platform reference.
 */
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { IMAGE_LINES } from '../../src/chat/attachments/turn-images.js';
import { hang, textOf, type FakeLlmRequest } from '../fakes/llm/server.js';
import type { ConfigInput } from '../../src/config/schema.js';
import type { ScenarioDriver, ScenarioFile } from './driver.js';
import { waitFor, waitForMessage, type Harness } from './harness.js';

/** What the suite lends these scenarios: its harness, started fresh for each. */
export interface ImageSuiteContext {
  start(overrides?: ConfigInput): Promise<Harness>;
}

/** A 3000 x 2000 photo (larger than the 1568 pixels a model is sent), sent as a platform sends photos. */
async function largePhoto(): Promise<ScenarioFile> {
  const bytes = await sharp({ create: { width: 3000, height: 2000, channels: 3, background: '#2a6f97' } }).jpeg({ quality: 70 }).toBuffer();
  return { name: 'view.jpg', mimeType: 'image/jpeg', bytes, photo: { width: 3000, height: 2000 } };
}

/** The last user message of a request, as text (its image parts left out). */
function lastUserText(request: FakeLlmRequest | undefined): string {
  const user = request?.messages.filter((message) => message.role === 'user').at(-1);
  return textOf(user?.content);
}

/** The paths of the files called `name` under `dir`. */
function filesNamed(dir: string, name: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name === name)
    .map((entry) => join(entry.parentPath, entry.name));
}

/** Defines the image scenarios for one channel. */
export function defineImageScenarios(driver: ScenarioDriver, suite: ImageSuiteContext): void {
  const [, alice] = driver.users as [(typeof driver.users)[0], (typeof driver.users)[0]];
  const noFiles = driver.sendFile ? undefined : 'the channel takes no files';
  /** A scenario that needs what the channel may not have: skipped with the reason instead of faked. */
  const itNeeds = (reasons: Array<string | undefined>, title: string, body: () => Promise<void>, timeout?: number) => {
    const reason = reasons.find(Boolean);
    if (reason) it.skip(`${title} (skipped: ${reason})`, body);
    else it(title, body, timeout);
  };

  describe(`scenarios on ${driver.name}: images`, () => {
    itNeeds([noFiles], 'a photo with a question reaches a model that sees as an image part, downscaled to 1568 pixels', async () => {
      const h = await suite.start({ llm: { vision: true } });
      const dm = h.driver.dm(alice);
      await h.driver.sendFile!(dm, alice, 'what is in this picture?', await largePhoto());
      await waitForMessage(h, dm, 'echo: what is in this picture?');
      expect(h.llm.images).toHaveLength(1);
      const [image] = h.llm.images;
      const decoded = await sharp(image!.bytes).metadata();
      expect([image!.mimeType, decoded.format, decoded.width, decoded.height]).toEqual(['image/jpeg', 'jpeg', 1568, 1045]);
      // The picture is named in the text it comes with.
      expect(lastUserText(h.llm.requests[image!.request])).toMatch(/\[attached: [^\]]+ \(image, image\/jpeg, [^\]]+\), saved in the workspace as attachments\/[^\]]+\.jpg\]/);
      // The thread's record keeps the picture's workspace path and type, not its bytes.
      const stored = JSON.stringify((await h.app.services.history.get(h.inbound.at(-1)!))?.messages);
      expect(stored).toContain(`"images":[{"path":"attachments/${savedName(h.llm.requests[image!.request]!)}","mimeType":"image/jpeg","turn":1}]`);
      expect(stored).not.toContain('base64');
      // /usage counts the image the model was sent.
      await h.driver.sendCommand(dm, alice, 'usage');
      await waitForMessage(h, dm, /Your usage today: [\d,]+ in \/ [\d,]+ out tokens \(with 1 image, about 1,000 of the tokens in\)/);
    });

    itNeeds([noFiles], 'the same to a model that does not see: one line says so, and the question is answered', async () => {
      const h = await suite.start();
      const dm = h.driver.dm(alice);
      await h.driver.sendFile!(dm, alice, 'what is in this picture?', await largePhoto());
      await waitForMessage(h, dm, 'echo: what is in this picture?');
      expect(h.llm.images).toHaveLength(0);
      expect(lastUserText(h.llm.requests.at(-1))).toMatch(/\n\[[^\]]+\.jpg: an image was sent, but you cannot see images: say so if asked about it\]$/);
      expect(h.driver.messages(dm).map((message) => message.text).join('\n')).not.toMatch(/could not take/);
    });

    itNeeds([noFiles], "the conversation's model decides: after /model use of one that sees, the picture is shown; older turns' pictures are not sent again", async () => {
      const h = await suite.start({ llm: { models: [{ name: 'fake-model' }, { name: 'eyes', vision: true }] }, attachments: { keepImages: 2 } });
      const dm = h.driver.dm(alice);
      await h.driver.sendFile!(dm, alice, 'look at this', await largePhoto());
      await waitForMessage(h, dm, 'echo: look at this');
      expect(h.llm.images).toHaveLength(0);
      await h.driver.sendCommand(dm, alice, 'model', 'use eyes');
      await waitFor(() => [...h.driver.messages(dm).map((m) => m.text), ...h.driver.privateNotices(alice)].some((t) => /now uses eyes/.test(t)), 'the switch');
      await h.driver.sendMessage(dm, alice, 'and now?');
      await waitForMessage(h, dm, 'echo: and now?');
      expect(h.llm.requests.at(-1)!.model).toBe('eyes');
      expect(h.llm.images.map((image) => image.request)).toEqual([h.llm.requests.length - 1]);
      await h.driver.sendMessage(dm, alice, 'one more');
      await waitForMessage(h, dm, 'echo: one more');
      // Two turns later the picture is a line, no longer an image part.
      expect(h.llm.images.filter((image) => image.request === h.llm.requests.length - 1)).toHaveLength(0);
      const sent = h.llm.requests.at(-1)!.messages.map((message) => textOf(message.content)).join('\n');
      expect(sent).toContain(IMAGE_LINES.earlier(savedName(h.llm.requests[0]!)));
    });

    itNeeds([noFiles, driver.noGroups], 'in a group, a picture sent to the bot reaches a model that sees', async () => {
      const h = await suite.start({ llm: { vision: true } });
      const group = h.driver.group();
      await h.driver.sendFile!(group, alice, 'what do you make of this?', await largePhoto());
      await waitForMessage(h, group, 'echo: what do you make of this?');
      expect(h.llm.images).toHaveLength(1);
      // Saved in the group's workspace, where the group's next turns find it.
      expect(filesNamed(join(h.config.dataDir, 'workspace', 'chats'), savedName(h.llm.requests[h.llm.images[0]!.request]!))).toHaveLength(1);
    });

    itNeeds([noFiles], 'a restart before the model saw the picture: it is fetched again by its reference and still reaches the model', async () => {
      const h = await suite.start({ llm: { vision: true } });
      const dm = h.driver.dm(alice);
      // The first model call never answers: the bot restarts in the middle of the turn.
      h.llm.enqueue(hang());
      await h.driver.sendFile!(dm, alice, 'describe it', await largePhoto());
      await waitFor(() => h.llm.served >= 1, 'the first model call');
      const saved = filesNamed(h.config.dataDir, savedName(h.llm.requests[0]!));
      expect(saved).toHaveLength(1);
      // As on another instance or a new disk: the saved picture is gone.
      rmSync(saved[0]!);
      await h.restart();
      await waitForMessage(h, dm, 'echo: describe it', 15_000);
      expect(filesNamed(h.config.dataDir, savedName(h.llm.requests[0]!))).toHaveLength(1);
      const last = h.llm.images.filter((image) => image.request === h.llm.requests.length - 1);
      expect(last).toHaveLength(1);
      const decoded = await sharp(last[0]!.bytes).metadata();
      expect([decoded.width, decoded.height]).toEqual([1568, 1045]);
    }, 30_000);
  });
}

/** The name the picture was saved under, from the line the model read. */
function savedName(request: FakeLlmRequest): string {
  const match = /saved in the workspace as attachments\/([^\]]+?)\]/.exec(lastUserText(request));
  if (!match) throw new Error(`no saved picture named in ${JSON.stringify(lastUserText(request))}`);
  return match[1]!;
}
