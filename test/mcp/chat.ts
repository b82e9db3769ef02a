/**
 * Talking to the app about MCP tools in tests: a model that calls the tool it
 * is asked to ("call <tool> <json args>") and then repeats the result, the
 * owner's DM, and the servers' state. Also the fixture servers' commands and a
 * logger whose lines the test reads.
 */
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/log.js';
import { textReply, toolCallReply, type FakeLlmEntry, type FakeLlmRequest } from '../fakes/llm/server.js';
import type { AppRig } from '../support/app-rig.js';
import { testDm } from '../support/test-channel.js';

/** The owner, who talks to the bot in {@link dm}. */
export const ada = { id: 'owner', name: 'Ada' };
/** The owner's DM. */
export const dm = testDm(ada.id);

/** Our fixture server (`slow`, `crash`, `add_tool`, `env`) over stdio. */
export const FIXTURE = join(import.meta.dirname, '..', 'fakes', 'mcp', 'server.ts');
/** The hostile server over stdio (see `test/fakes/mcp/hostile.ts`). */
export const HOSTILE = join(import.meta.dirname, '..', 'fakes', 'mcp', 'hostile-stdio.ts');

/** The config of a stdio server run from a TypeScript file. */
export function tsServer(file: string, env: Record<string, string> = {}, extra: Record<string, unknown> = {}) {
  return { command: process.execPath, args: ['--import', 'tsx', file], env, approval: 'never' as const, ...extra };
}

/** "call <tool> <json args>" calls the tool; after it, the model repeats the result. */
export function model(request: FakeLlmRequest): FakeLlmEntry {
  const last = request.messages.at(-1)!;
  if (last.role === 'tool') return textReply(`result: ${String(last.content).replace(/\s+/g, ' ')}`);
  const asked = /call (\S+)(?: (\{.*\}))?/.exec(String(last.content));
  if (!asked) return textReply('ok');
  return toolCallReply([{ name: asked[1]!, arguments: asked[2] ? (JSON.parse(asked[2]) as Record<string, unknown>) : {} }]);
}

/** The bot's messages in the DM. */
export function texts(rig: AppRig): string[] {
  return rig.platform.messagesIn(dm).map((m) => m.text);
}

/** Says `text` in the DM (approving the prompt when asked) and waits for a new reply matching `pattern`. */
export async function answer(rig: AppRig, text: string, pattern: RegExp, approve = false): Promise<string> {
  const before = rig.platform.approvalsIn(dm).length;
  const seen = texts(rig).length;
  rig.platform.channel.userMessage({ chat: dm, sender: ada, text });
  if (approve) {
    const prompt = await rig.platform.waitFor(() => rig.platform.approvalsIn(dm)[before], 10_000, 'the approval prompt');
    rig.platform.channel.press(prompt.prompt.id, 'approve', ada);
  }
  const reply = () => texts(rig).slice(seen).find((t) => pattern.test(t));
  return rig.platform.waitFor(reply, 15_000, `a reply matching ${String(pattern)}; seen ${JSON.stringify(texts(rig).slice(seen))}`);
}

/** The MCP tools offered now. */
export function offered(rig: AppRig): string[] {
  return rig.app.services.registry.names().filter((name) => name.includes('__'));
}

/** The status of the MCP server `server`. */
export function serverStatus(rig: AppRig, server: string) {
  return rig.app.services.registry.sourceStatuses().find((s) => s.name === `mcp:${server}`);
}

/** The tool result the model read last, as the model read it. */
export function lastToolResult(rig: AppRig): string {
  const messages = rig.llm.requests.flatMap((request) => request.messages);
  return String(messages.filter((message) => message.role === 'tool').at(-1)?.content ?? '');
}

/** A real pino logger whose lines the test reads. */
export function capturedLog(secrets: string[] = []): { log: Logger; lines: () => Array<Record<string, unknown>>; text: () => string } {
  let written = '';
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      written += chunk.toString('utf8');
      done();
    },
  });
  const log = createLogger({ level: 'debug', pretty: false, destination: out, secrets });
  const lines = () =>
    written
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { log, lines, text: () => written };
}
