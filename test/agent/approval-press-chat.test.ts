/**
 * An approval is answered only in the conversation where it was asked: the app
 * with the grammY-based Telegram channel on the fake Bot API, and a press of
 * the prompt's own button payload sent by the requester from another chat.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InlineKeyboardButton } from 'grammy/types';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { decodeApprovalPayload } from '../../src/channels/approval-payload.js';
import { TelegramChannel } from '../../src/channels/telegram/adapter.js';
import { parseConfig } from '../../src/config/load.js';
import { startFakeLlm, textReply, toolCallReply, type FakeLlm } from '../fakes/llm/server.js';
import { startFakeTelegram, waitFor, type BotMessageState, type FakeTelegram } from '../fakes/telegram/index.js';
import { ALICE, dmOf, FAST_OPTIONS, supergroup } from '../channels/telegram/helpers.js';
import { scenarioTools, ToolLog } from '../scenarios/tools.js';

const NOTICE = 'This approval belongs to another conversation.';

/** The Approve button of a prompt. */
function approveButton(prompt: BotMessageState): InlineKeyboardButton.CallbackButton {
  const buttons = (prompt.replyMarkup?.inline_keyboard.flat() ?? []) as InlineKeyboardButton.CallbackButton[];
  const approve = buttons.find((button) => decodeApprovalPayload(button.callback_data)?.action === 'approve');
  if (!approve) throw new Error(`no Approve button on ${JSON.stringify(prompt.plainText)}`);
  return approve;
}

describe('approval presses from another conversation', () => {
  let telegram: FakeTelegram;
  let llm: FakeLlm;
  let app: App | undefined;
  let dir: string;
  const tools = new ToolLog();

  beforeEach(async () => {
    telegram = await startFakeTelegram();
    llm = await startFakeLlm({ script: [toolCallReply([{ name: 'danger', arguments: { target: 'production' } }]), textReply('Done with production.')] });
    dir = mkdtempSync(join(tmpdir(), 'pincer-approval-chat-'));
    tools.dangers.length = 0;
    const config = parseConfig({
      dataDir: dir,
      owners: [`telegram:${ALICE.id}`],
      telegram: { token: telegram.token, apiRoot: telegram.apiRoot },
      llm: { baseUrl: llm.url, model: 'fake-model', stream: false, maxRetries: 0 },
    });
    app = await createApp({
      config,
      tools: scenarioTools(tools),
      channels: [{ name: 'telegram', create: (deps) => new TelegramChannel(config.telegram, deps, FAST_OPTIONS) }],
    });
    await app.start();
  });

  afterEach(async () => {
    await app?.stop('test over');
    app = undefined;
    await llm.close();
    await telegram.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("refuses the requester's press from another chat, keeps the approval waiting, and runs nothing", async () => {
    telegram.sendUserMessage({ chat: dmOf(ALICE), from: ALICE, text: 'Run danger on production.' });
    const prompt = await waitFor(() => telegram.chatMessages(ALICE.id).find((m) => m.replyMarkup), 10_000, 'the approval prompt');
    const approve = approveButton(prompt);

    // The same payload, pressed by the requester, but in a group the bot is also in.
    telegram.pressButton({ chat: supergroup(), from: ALICE, messageId: prompt.messageId, data: approve.callback_data });
    // The notice is the last thing a refused press does (approval-flow.ts): by now it has run nothing,
    // and the danger count after the real press below would show a run started by this one.
    await waitFor(() => telegram.callbackAnswers.some((answer) => answer.text === NOTICE), 5_000, 'the refusal notice');

    expect(telegram.callbackAnswers).toMatchObject([{ userId: String(ALICE.id), text: NOTICE }]);
    expect(tools.dangers).toEqual([]);
    expect(llm.requests).toHaveLength(1);
    expect(await app!.services.approvals.pendingFor(`telegram:${ALICE.id}`)).toMatchObject({ status: 'pending' });
    expect(approveButton(telegram.chatMessages(ALICE.id).find((m) => m.messageId === prompt.messageId)!)).toBeDefined();

    // Not used up: the same press in the DM where it was asked answers it.
    telegram.pressButton({ chat: dmOf(ALICE), from: ALICE, messageId: prompt.messageId, data: approve.callback_data });
    await waitFor(() => telegram.chatMessages(ALICE.id).find((m) => m.plainText.includes('Done with production.')), 10_000, 'the answer');
    expect(tools.dangers).toEqual(['production']);
  }, 30_000);
});
