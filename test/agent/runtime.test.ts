import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import type { ConfigInput } from '../../src/config/schema.js';
import { startFakeLlm, textReply, type FakeLlm, type FakeLlmEntry, type FakeLlmRequest } from '../fakes/llm/server.js';
import type { Tool } from '../../src/tools/types.js';
import { scenarioTools, ToolLog } from '../scenarios/tools.js';
import { toolCallReply } from '../fakes/llm/server.js';
import { TestPlatform, testDm, testGroup } from '../support/test-channel.js';

interface Rig {
  app: App;
  llm: FakeLlm;
  platform: TestPlatform;
  dir: string;
}

let rig: Rig | undefined;
afterEach(async () => {
  if (!rig) return;
  await rig.app.stop('test over');
  await rig.llm.close();
  rmSync(rig.dir, { recursive: true, force: true });
  rig = undefined;
});

/** Echoes every user message since the model's last answer, in order. */
function echoAll(request: FakeLlmRequest) {
  const texts: string[] = [];
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i]!;
    if (message.role === 'assistant') break;
    if (message.role === 'user') texts.unshift(String(message.content));
  }
  return textReply(`echo: ${texts.join(' + ')}`, { latencyMs: 20 });
}

async function start(
  overrides: ConfigInput = {},
  responder: (request: FakeLlmRequest) => FakeLlmEntry = echoAll,
  tools: Tool[] = [],
): Promise<Rig> {
  const dir = mkdtempSync(join(tmpdir(), 'pincer-runtime-'));
  const llm = await startFakeLlm({ responder, record: true });
  const platform = new TestPlatform();
  const config = parseConfig({
    ...overrides,
    dataDir: dir,
    owners: ['test:owner'],
    llm: { baseUrl: llm.url, model: 'fake-model', maxRetries: 0, stream: false },
    agent: { maxConcurrentTurns: 16, ...overrides.agent },
  });
  const app = await createApp({ config, tools, channels: [{ name: 'test', create: (deps) => platform.createChannel(deps) }] });
  await app.start();
  rig = { app, llm, platform, dir };
  return rig;
}

const person = (id: string) => ({ id, name: `Person ${id}` });

describe('runtime', () => {
  it('loses no message in a burst of 1,000 over 100 threads, and keeps per-thread order', async () => {
    const { app, platform } = await start({ agent: { maxConcurrentTurns: 8, userMessagesPerMinute: 100 } });
    const sent = new Map<string, string[]>();
    for (let round = 0; round < 10; round++) {
      for (let thread = 0; thread < 100; thread++) {
        const user = person(`u${thread}`);
        const text = `t${thread}-m${round}`;
        platform.channel.userMessage({ chat: testDm(user.id), sender: user, text });
        sent.set(user.id, [...(sent.get(user.id) ?? []), text]);
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    await app.runtime.idle();
    for (const [userId, texts] of sent) {
      const record = await app.services.history.get(`test:dm-${userId}`);
      const userTexts = record!.messages.filter((m) => m.role === 'user').map((m) => m.content);
      expect(userTexts).toEqual(texts);
      expect(record!.messages.at(-1)!.role).toBe('assistant');
      const replies = platform.messagesIn(testDm(userId)).map((m) => m.text);
      const echoed = replies.flatMap((reply) => reply.replace(/^echo: /, '').split(' + '));
      expect(echoed).toEqual(texts);
    }
  }, 60_000);

  it('refuses an oversized message with a notice, and keeps working', async () => {
    const { app, platform } = await start({ agent: { maxInboundChars: 100 } });
    const user = person('big');
    platform.channel.userMessage({ chat: testDm(user.id), sender: user, text: 'x'.repeat(500) });
    platform.channel.userMessage({ chat: testDm(user.id), sender: user, text: 'small one' });
    await app.runtime.idle();
    const texts = platform.messagesIn(testDm(user.id)).map((m) => m.text);
    expect(texts[0]).toMatch(/500 characters long; the limit is 100/);
    expect(texts).toContain('echo: small one');
  });

  it('tells a flooding user to slow down, once, without starving another thread', async () => {
    const { app, platform, llm } = await start({ agent: { userMessagesPerMinute: 3 } });
    const flood = person('flood');
    for (let i = 0; i < 10; i++) platform.channel.userMessage({ chat: testDm(flood.id), sender: flood, text: `f${i}` });
    const calm = person('calm');
    platform.channel.userMessage({ chat: testDm(calm.id), sender: calm, text: 'hello' });
    await app.runtime.idle();
    const texts = platform.messagesIn(testDm(flood.id)).map((m) => m.text);
    expect(texts.filter((t) => /faster than 3 a minute/.test(t))).toHaveLength(1);
    expect(platform.messagesIn(testDm(calm.id)).map((m) => m.text)).toEqual(['echo: hello']);
    const floodTexts = llm.requests.flatMap((r) => r.messages.filter((m) => m.role === 'user').map((m) => String(m.content)));
    expect(floodTexts).not.toContain('f5');
  });

  it('answers an unknown command with help, and /help lists the commands', async () => {
    const { app, platform } = await start();
    const user = person('cmd');
    platform.channel.userMessage({ chat: testDm(user.id), sender: user, text: '/frobnicate now' });
    platform.channel.userMessage({ chat: testDm(user.id), sender: user, text: '/help' });
    await app.runtime.idle();
    const texts = platform.messagesIn(testDm(user.id)).map((m) => m.text);
    expect(texts[0]).toMatch(/Unknown command \/frobnicate/);
    for (const name of ['/stop', '/new', '/status', '/tools', '/usage', '/policy']) expect(texts[1]).toContain(name);
  });

  it('/new forgets the conversation; /status and /usage report the thread', async () => {
    const { app, platform, llm } = await start();
    const user = person('st');
    const chat = testDm(user.id);
    platform.channel.userMessage({ chat, sender: user, text: 'first message' });
    await app.runtime.idle();
    platform.channel.command({ chat, sender: user, name: 'status' });
    platform.channel.command({ chat, sender: user, name: 'usage' });
    await app.runtime.idle();
    const texts = platform.messagesIn(chat).map((m) => m.text);
    const status = texts.find((t) => t.startsWith('State:'))!;
    expect(status).toMatch(/State: idle/);
    expect(status).toMatch(/History: 2 messages/);
    expect(texts.find((t) => t.startsWith('Your usage'))).toMatch(/Your usage today: .* over 1 model call/);
    platform.channel.command({ chat, sender: user, name: 'new' });
    await app.runtime.idle();
    platform.channel.userMessage({ chat, sender: user, text: 'second message' });
    await app.runtime.idle();
    const last = llm.requests.at(-1)!.messages.map((m) => String(m.content)).join('\n');
    expect(last).not.toContain('first message');
  });

  it('refuses /shutdown from a non-owner and /new in a group from a non-admin', async () => {
    const { app, platform } = await start();
    const user = person('nobody');
    platform.channel.command({ chat: testDm(user.id), sender: user, name: 'shutdown', interaction: true });
    const group = testGroup('g1');
    platform.channel.command({ chat: group, sender: user, name: 'new', interaction: true });
    await app.runtime.idle();
    const notices = platform.noticesFor(user.id).map((n) => n.text);
    expect(notices).toEqual(expect.arrayContaining([expect.stringMatching(/Only an owner/), expect.stringMatching(/Only an admin/)]));
  });

  it('shuts down on /shutdown from an owner', async () => {
    const { app, platform } = await start();
    platform.channel.command({ chat: testDm('owner'), sender: person('owner'), name: 'shutdown' });
    await expect(app.runtime.done).resolves.toMatch(/shutdown/);
  });

  it('retries a reply whose send fails transiently', async () => {
    const { app, platform } = await start();
    platform.failNext('send', 1);
    const user = person('retry');
    platform.channel.userMessage({ chat: testDm(user.id), sender: user, text: 'arrive please' });
    await app.runtime.idle();
    expect(platform.messagesIn(testDm(user.id)).map((m) => m.text)).toEqual(['echo: arrive please']);
  });

  it('answers in a group as a reply to the message that addressed it; not in a DM', async () => {
    const { app, platform } = await start();
    const group = testGroup('replies');
    const asked = platform.channel.userMessage({ chat: group, sender: person('a'), text: 'question?', mentionsBot: true });
    const user = person('dmuser');
    platform.channel.userMessage({ chat: testDm(user.id), sender: user, text: 'private question' });
    await app.runtime.idle();
    expect(platform.messagesIn(group)[0]).toMatchObject({ text: 'echo: [Person a] question?', replyTo: asked.messageId });
    expect(platform.messagesIn(testDm(user.id))[0]!.replyTo).toBeUndefined();
  });

  it('does not answer group messages that are not addressed to it', async () => {
    const { app, platform, llm } = await start();
    const group = testGroup('quiet');
    platform.channel.userMessage({ chat: group, sender: person('a'), text: 'just chatting' });
    platform.channel.userMessage({ chat: group, sender: person('b'), text: '/somethingelse' });
    await app.runtime.idle();
    expect(llm.served).toBe(0);
    expect(platform.messagesIn(group)).toHaveLength(0);
  });

  it('keeps going after a turn fails: an LLM error is reported and the process stays up', async () => {
    const { app, platform } = await start({}, (): FakeLlmEntry => ({ type: 'error', status: 401 }));
    const user = person('err');
    platform.channel.userMessage({ chat: testDm(user.id), sender: user, text: 'hi' });
    await app.runtime.idle();
    expect(platform.messagesIn(testDm(user.id))[0]!.text).toMatch(/rejected my credentials/);
    let settled = false;
    void app.runtime.done.then(() => (settled = true));
    // Still up: a next message is taken and answered (with the same error), and the runtime has not ended.
    platform.channel.userMessage({ chat: testDm(user.id), sender: user, text: 'still there?' });
    await platform.waitFor(() => platform.messagesIn(testDm(user.id)).length === 2, 5_000, 'the second answer');
    expect(platform.messagesIn(testDm(user.id))[1]!.text).toMatch(/rejected my credentials/);
    expect(settled).toBe(false);
  });
});

describe('stop and approvals', () => {
  it('/stop during a batch that also needs an approval shows no prompt and closes the calls', async () => {
    const log = new ToolLog();
    const batch = (request: FakeLlmRequest): FakeLlmEntry =>
      request.messages.some((m) => m.role === 'tool')
        ? textReply('after')
        : toolCallReply([
            { name: 'slow', arguments: { ms: 10_000 } },
            { name: 'note_write', arguments: { text: 'x' } },
          ]);
    const { app, platform } = await start({}, batch, scenarioTools(log));
    const user = person('stopper');
    const chat = testDm(user.id);
    platform.channel.userMessage({ chat, sender: user, text: 'go' });
    await platform.waitFor(() => log.slowStarted === 1, 5_000, 'the slow tool');
    platform.channel.command({ chat, sender: user, name: 'stop' });
    await app.runtime.idle();
    expect(platform.approvalsIn(chat)).toHaveLength(0);
    expect(log.notes).toHaveLength(0);
    const record = await app.services.history.get(`test:${chat.chatId}`);
    const calls = record!.messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []) : []));
    const answered = new Set(record!.messages.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : [])));
    expect(calls.every((call) => answered.has(call.id))).toBe(true);
  });
});

/** Every tool call in a request is answered before any other message follows it. */
function wellFormed(request: FakeLlmRequest): boolean {
  let open = new Set<string>();
  for (const message of request.messages) {
    if (message.role === 'tool') open.delete(String(message.tool_call_id));
    else if (open.size) return false;
    const calls = (message.tool_calls as { id: string }[] | undefined) ?? [];
    if (message.role === 'assistant' && calls.length) open = new Set(calls.map((c) => c.id));
  }
  return true;
}

describe('shutdown', () => {
  it('tells the people whose turn it interrupts, and shuts down within the deadline', async () => {
    const log = new ToolLog();
    const slow = (request: FakeLlmRequest): FakeLlmEntry =>
      request.messages.some((m) => m.role === 'tool') ? textReply('late') : toolCallReply([{ name: 'slow', arguments: { ms: 30_000 } }]);
    const { app, platform } = await start({}, slow, scenarioTools(log));
    const user = person('busy');
    const chat = testDm(user.id);
    platform.channel.userMessage({ chat, sender: user, text: 'take your time' });
    await platform.waitFor(() => log.slowStarted === 1, 5_000, 'the slow tool');
    const started = Date.now();
    await app.stop('SIGTERM');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(log.slowAborted).toBe(1);
    expect(platform.messagesIn(chat).map((m) => m.text)).toEqual([expect.stringMatching(/restarting/)]);
  });
});

describe('approval races', () => {
  const noteThen = (request: FakeLlmRequest): FakeLlmEntry => {
    const last = request.messages.at(-1)!;
    if (last.role === 'tool') return textReply(`result: ${String(last.content).includes('saved') ? 'saved' : 'not saved'}`);
    return String(last.content).includes('note') ? toolCallReply([{ name: 'note_write', arguments: { text: 'x' } }]) : echoAll(request);
  };

  it('a message sent right after Approve joins the resumed turn: the tool runs once and every request is well formed', async () => {
    const log = new ToolLog();
    const { app, platform, llm } = await start({}, noteThen, scenarioTools(log));
    const user = person('racer');
    const chat = testDm(user.id);
    platform.channel.userMessage({ chat, sender: user, text: 'note please' });
    await platform.waitFor(() => platform.approvalsIn(chat).length === 1, 5_000, 'the prompt');
    const prompt = platform.approvalsIn(chat)[0]!;
    platform.channel.press(prompt.prompt.id, 'approve', user);
    platform.channel.userMessage({ chat, sender: user, text: 'thanks' });
    await app.runtime.idle();
    expect(log.notes).toEqual(['x']);
    expect(llm.requests.every(wellFormed)).toBe(true);
    expect(platform.messagesIn(chat).map((m) => m.text).join('\n')).not.toMatch(/Sorry/);
  });

  it('Approve after an admin disabled the tool runs nothing', async () => {
    const log = new ToolLog();
    const { app, platform } = await start({}, noteThen, scenarioTools(log));
    const user = person('late');
    const chat = testDm(user.id);
    platform.channel.userMessage({ chat, sender: user, text: 'note please' });
    await platform.waitFor(() => platform.approvalsIn(chat).length === 1, 5_000, 'the prompt');
    await app.services.policy.set('note_write', 'global', 'disable', 'test:owner');
    platform.channel.press(platform.approvalsIn(chat)[0]!.prompt.id, 'approve', user);
    await app.runtime.idle();
    expect(log.notes).toEqual([]);
    expect(platform.messagesIn(chat).map((m) => m.text)).toContain('result: not saved');
  });
});

describe('tool commands', () => {
  it('/tools shows how each tool runs here: free, asks first, or DM only in a group', async () => {
    const { app, platform } = await start();
    const user = person('tools');
    platform.channel.command({ chat: testDm(user.id), sender: user, name: 'tools' });
    platform.channel.command({ chat: testGroup('tg'), sender: user, name: 'tools' });
    await app.runtime.idle();
    const [dm] = platform.messagesIn(testDm(user.id)).map((m) => m.text);
    expect(dm).toMatch(/calculator: free/);
    expect(dm).toMatch(/files_write: asks first/);
    const [group] = platform.messagesIn(testGroup('tg')).map((m) => m.text);
    expect(group).toMatch(/files_write: DM only/);
  });

  it('/tools tells a tool the person chose Always allow for from a tool that never asks', async () => {
    const noteFirst = (request: FakeLlmRequest): FakeLlmEntry =>
      request.messages.at(-1)!.role === 'tool' ? textReply('noted') : toolCallReply([{ name: 'note_write', arguments: { text: 'x' } }]);
    const { app, platform } = await start({}, noteFirst, scenarioTools(new ToolLog()));
    const user = person('chooser');
    const chat = testDm(user.id);
    platform.channel.userMessage({ chat, sender: user, text: 'note please' });
    await platform.waitFor(() => platform.approvalsIn(chat).length === 1, 5_000, 'the prompt');
    platform.channel.press(platform.approvalsIn(chat)[0]!.prompt.id, 'always', user);
    await app.runtime.idle();
    platform.channel.command({ chat, sender: user, name: 'tools' });
    await app.runtime.idle();
    const tools = platform.messagesIn(chat).map((m) => m.text).find((text) => text.startsWith('Tools here'));
    expect(tools).toMatch(/note_write: runs without asking: you chose Always allow \(\/permissions reset note_write to be asked again\)/);
    expect(tools).toMatch(/calculator: free\n/);
  });

  it('/policy by an owner is persisted before the reply, audited, and reflected in /tools and /policy list', async () => {
    const { app, platform } = await start();
    const owner = person('owner');
    const chat = testDm(owner.id);
    platform.channel.command({ chat, sender: owner, name: 'policy', args: 'disable http_fetch global' });
    await app.runtime.idle();
    expect(await app.services.policy.effective('http_fetch', 'global')).toBe('disable');
    platform.channel.command({ chat, sender: owner, name: 'policy', args: 'list' });
    platform.channel.command({ chat, sender: owner, name: 'tools' });
    await app.runtime.idle();
    const texts = platform.messagesIn(chat).map((m) => m.text);
    expect(texts.find((t) => t.startsWith('Tool policy'))).toMatch(/http_fetch: disable/);
    expect(texts.find((t) => t.startsWith('Tools here'))).toMatch(/http_fetch: disabled/);
    const { createAuditLog } = await import('../../src/tools/audit.js');
    const audit = await createAuditLog(app.store, { log: app.services.log }).recent(10);
    expect(audit).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'policy', tool: 'http_fetch' })]));
  });

  it('/policy names an unknown tool and changes nothing', async () => {
    const { app, platform } = await start();
    const owner = person('owner');
    platform.channel.command({ chat: testDm(owner.id), sender: owner, name: 'policy', args: 'disable nosuchtool global', interaction: true });
    await app.runtime.idle();
    expect(platform.noticesFor(owner.id).map((n) => n.text)).toEqual([expect.stringMatching(/no tool named "nosuchtool"/)]);
  });
});
