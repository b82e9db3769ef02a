/**
 * An approval whose expiry falls due while the process is down: the next start
 * expires it, edits the prompt, runs nothing, and the turn continues with the
 * "expired" result (real app, store on disk, openai-SDK provider).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { APPROVAL_RESULTS } from '../../src/chat/turn.js';
import { textReply, toolCallReply, type FakeLlmEntry, type FakeLlmRequest } from '../fakes/llm/server.js';
import { scenarioTools, ToolLog } from '../scenarios/tools.js';
import { echoAll, startAppRig, type AppRig } from '../support/app-rig.js';
import { testDm } from '../support/test-channel.js';

let rig: AppRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const TIMEOUT_MS = 2_000;

/** Calls note_write for "note ..."; after a tool result, reports it. */
function noteModel(request: FakeLlmRequest): FakeLlmEntry {
  const last = request.messages.at(-1)!;
  if (last.role === 'tool') return textReply(`result: ${String(last.content)}`);
  return String(last.content).startsWith('note') ? toolCallReply([{ name: 'note_write', arguments: { text: 'while away' } }]) : echoAll(request);
}

describe('approval expiry across a restart', () => {
  it('expires at start when it fell due while the process was down: nothing runs, the prompt says so, the turn goes on', async () => {
    const log = new ToolLog();
    rig = await startAppRig({ config: { agent: { approvalTimeoutMs: TIMEOUT_MS } }, responder: noteModel, tools: scenarioTools(log) });
    const user = { id: 'away', name: 'Away' };
    const chat = testDm(user.id);
    rig.platform.channel.userMessage({ chat, sender: user, text: 'note something' });
    const prompt = await rig.platform.waitFor(() => rig!.platform.approvalsIn(chat)[0], 10_000, 'the approval prompt');
    await rig.stopApp();
    const stoppedAt = Date.now();
    // Still pending when the process went down: the expiry is the next start's job.
    expect(prompt.state).toBe('shown');
    const servedBefore = rig.llm.served;

    await new Promise((resolve) => setTimeout(resolve, Math.max(0, prompt.prompt.expiresAt - stoppedAt) + 300));
    expect(rig.llm.served).toBe(servedBefore);
    const app = await rig.startApp();
    await rig.platform.waitFor(() => prompt.state === 'resolved', 10_000, 'the prompt to show the expiry');
    await rig.platform.waitFor(() => rig!.platform.messagesIn(chat).some((m) => m.text.startsWith('result:')), 10_000, 'the continued turn');
    await app.runtime.idle();

    expect(prompt.outcome?.decision).toBe('expired');
    expect(prompt.text).toMatch(/expired/i);
    expect(prompt.actions).toEqual([]);
    expect(log.notes).toEqual([]);
    const resumed = rig.llm.requests.at(-1)!;
    const toolResults = resumed.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
    expect(toolResults).toEqual([expect.stringContaining(APPROVAL_RESULTS.expired)]);
    expect(rig.platform.messagesIn(chat).map((m) => m.text)).toEqual([`result: ${toolResults[0]}`]);
  });
});
