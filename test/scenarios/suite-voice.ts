/**
 * The scenarios of voice and audio, on every channel that has voice
 * messages: the voice note is transcribed through the fake model's
 * `/v1/audio/transcriptions`, its words answered, and what was heard shown
 * above the answer; without a transcription endpoint the person is told once,
 * and what they wrote is still answered.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { oggOpus, wav } from '../support/audio.js';
import type { ScenarioChat, ScenarioDriver, ScenarioFile, ScenarioUser } from './driver.js';
import { startHarness, waitFor, waitForApproval, waitForMessage, type Harness } from './harness.js';

/** The scenarios of voice messages for `driver`, run by the shared suite. */
export function defineVoiceScenarios(driver: ScenarioDriver): void {
  let h: Harness | undefined;
  const alice = driver.users[1]!;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  }, 30_000);

  const transcribing = { llm: { transcription: { model: 'whisper-1' } } };
  const start = async (overrides = {}) => (h = await startHarness(driver, overrides));
  /** A voice message as the platform records one. */
  const voiceNote: ScenarioFile & { durationSecs: number } =
    driver.name === 'slack'
      ? { name: 'memo.wav', mimeType: 'audio/wav', bytes: wav(), durationSecs: 75 }
      : driver.name === 'discord'
        ? { name: 'voice-message.ogg', mimeType: 'audio/ogg', bytes: oggOpus(), durationSecs: 75 }
        : { name: 'voice.ogg', mimeType: 'audio/ogg', bytes: oggOpus(), durationSecs: 75 };
  /** The name the bot saves it under and sends to the transcription endpoint (Telegram's voice notes have none of their own). */
  const sentName = voiceNote.name;
  const modelSaw = (text: string) => h!.llm.requests.some((request) => request.messages.some((m) => String(m.content).includes(text)));
  const seenBy = (user: ScenarioUser, chat: ScenarioChat) => [...h!.driver.messages(chat).map((m) => m.text), ...h!.driver.privateNotices(user)];
  const noVoice = driver.sendVoice ? undefined : 'the channel has no voice messages';
  const noCaption = driver.name === 'discord' ? 'a Discord voice message carries no text' : undefined;
  const itNeeds = (reasons: Array<string | undefined>, title: string, body: () => Promise<void>) => {
    const reason = reasons.find(Boolean);
    if (reason) it.skip(`${title} (skipped: ${reason})`, body);
    else it(title, body);
  };

  describe(`scenarios on ${driver.name}: voice and audio`, () => {
    itNeeds([noVoice], 'transcribes a voice message, answers what it says, shows what was heard, and /usage counts the minutes', async () => {
      await start(transcribing);
      h!.llm.transcriptions.set({ type: 'transcript', text: 'what is the word', duration: 75 });
      const dm = h!.driver.dm(alice);
      await h!.driver.sendVoice!(dm, alice, '', voiceNote);
      const answer = await waitForMessage(h!, dm, 'echo: what is the word');
      expect(answer.text.startsWith('🎤 "what is the word"')).toBe(true);
      expect(h!.llm.transcriptions.requests).toEqual([
        { model: 'whisper-1', fileName: sentName, contentType: voiceNote.mimeType, size: voiceNote.bytes.length, responseFormat: 'verbose_json' },
      ]);
      expect(modelSaw(`[transcript of ${sentName}] what is the word`)).toBe(true);
      // Shown once: the quote is part of the answer, not a message of its own.
      expect(h!.driver.messages(dm).filter((m) => m.text.includes('🎤')).length).toBe(1);
      await h!.driver.sendCommand(dm, alice, 'usage');
      await waitFor(() => seenBy(alice, dm).some((text) => text.includes('Audio transcribed today: 1.3 minutes.')), () => `the usage; seen: ${JSON.stringify(seenBy(alice, dm))}`);
    });

    itNeeds([noVoice, noCaption], 'with text, the model reads both the text and the transcript', async () => {
      await start({ ...transcribing, attachments: { showTranscript: false } });
      h!.llm.transcriptions.set({ type: 'transcript', text: 'the word is pelican', duration: 2 });
      const dm = h!.driver.dm(alice);
      await h!.driver.sendVoice!(dm, alice, 'listen to this', voiceNote);
      const answer = await waitForMessage(h!, dm, 'echo: listen to this');
      expect(modelSaw(`listen to this\n[transcript of ${sentName}] the word is pelican\n[attached: ${sentName}`)).toBe(true);
      // attachments.showTranscript off: no quote.
      expect(answer.text).not.toContain('🎤');
    });

    itNeeds([noVoice], 'a turn run again after a restart shows what was heard once, and does not transcribe again', async () => {
      await start(transcribing);
      h!.llm.transcriptions.set({ type: 'transcript', text: 'slow 1500', duration: 3 });
      const owner = driver.users[0]!;
      const dm = h!.driver.dm(owner);
      await h!.driver.sendVoice!(dm, owner, '', voiceNote);
      await waitFor(() => h!.tools.slowStarted === 1, 'the slow tool to start');
      await h!.restart();
      const answer = await waitForMessage(h!, dm, 'result:', 15_000);
      expect(answer.text.startsWith('🎤 "slow 1500"')).toBe(true);
      expect(h!.driver.messages(dm).filter((m) => m.text.includes('🎤')).length).toBe(1);
      expect(h!.llm.transcriptions.requests).toHaveLength(1);
    });

    itNeeds([noVoice], 'a voice message whose turn asks for approval shows what was heard before the prompt, and the answer after it does not repeat it', async () => {
      await start(transcribing);
      h!.llm.transcriptions.set({ type: 'transcript', text: 'note buy milk', duration: 2 });
      const dm = h!.driver.dm(alice);
      await h!.driver.sendVoice!(dm, alice, '', voiceNote);
      const prompt = await waitForApproval(h!, dm);
      expect(h!.driver.messages(dm).map((m) => m.text)).toEqual(['🎤 "note buy milk"']);
      await h!.driver.pressApproval(dm, alice, prompt, 'approve');
      const answer = await waitForMessage(h!, dm, 'saved note "buy milk"');
      expect(answer.text).not.toContain('🎤');
    });

    itNeeds([noVoice], 'a voice message sent while a turn runs is read by that turn, and its answer shows what was heard', async () => {
      await start(transcribing);
      h!.llm.transcriptions.set({ type: 'transcript', text: 'and the word is heron', duration: 2 });
      const owner = driver.users[0]!;
      const dm = h!.driver.dm(owner);
      await h!.driver.sendMessage(dm, owner, 'slow 800');
      await waitFor(() => h!.tools.slowStarted === 1, 'the slow tool to start');
      await h!.driver.sendVoice!(dm, owner, '', voiceNote);
      const answer = await waitForMessage(h!, dm, 'echo: and the word is heron');
      expect(answer.text.startsWith('🎤 "and the word is heron"')).toBe(true);
      expect(h!.driver.messages(dm).filter((m) => m.text.includes('🎤')).length).toBe(1);
      // One turn read both: the tool's result was never answered on its own.
      expect(h!.driver.messages(dm).some((m) => m.text.includes('result:'))).toBe(false);
    });

    itNeeds([noVoice], 'a transcription that fails is told, and the message still answered', async () => {
      await start(transcribing);
      h!.llm.transcriptions.set({ type: 'error', status: 500 });
      const dm = h!.driver.dm(alice);
      await h!.driver.sendVoice!(dm, alice, '', voiceNote);
      await waitForMessage(h!, dm, `I could not transcribe ${sentName}: the transcription service answered with an error (HTTP 500).`);
      await waitFor(() => h!.llm.requests.length > 0, 'the model to be asked');
      expect(modelSaw('it could not be transcribed (the transcription service answered with an error (HTTP 500)). The person has been told')).toBe(true);
    });

    itNeeds([noVoice], 'without a transcription endpoint: told once per conversation, and the rest answered', async () => {
      await start();
      const dm = h!.driver.dm(alice);
      const told = 'I cannot listen to voice messages or audio here: no transcription service is set up.';
      const text = noCaption ? '' : 'hello with a voice note';
      await h!.driver.sendVoice!(dm, alice, text, voiceNote);
      await waitForMessage(h!, dm, told);
      if (text) await waitForMessage(h!, dm, `echo: ${text}`);
      await h!.driver.sendVoice!(dm, alice, '', voiceNote);
      await h!.driver.sendMessage(dm, alice, 'marker after the voice notes');
      await waitForMessage(h!, dm, 'echo: marker after the voice notes');
      expect(h!.driver.messages(dm).filter((m) => m.text.includes(told)).length).toBe(1);
      expect(modelSaw('you cannot hear audio: no transcription service is set up here')).toBe(true);
      expect(h!.llm.transcriptions.requests).toEqual([]);
    });
  });
}
