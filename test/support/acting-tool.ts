/**
 * A tool that acts for the person a turn answers and records as whom it ran,
 * and a fake model that acts on the latest message it is shown: together they
 * tell whose authority a turn used for whose words.
 */
import { z } from 'zod';
import type { Tool } from '../../src/tools/types.js';
import { textReply, toolCallReply, type FakeLlmEntry, type FakeLlmRequest } from '../fakes/llm/server.js';

/** One run of the acting tool: whose authority it ran with, and the words that asked for it. */
export interface Act {
  userId: string;
  words: string;
}

/** The `act_on` tool, free to run anywhere (groups included), recording each run in `acts`. */
export function actingTool(acts: Act[]): Tool {
  const parameters = z.object({ words: z.string() });
  const tool: Tool<typeof parameters> = {
    name: 'act_on',
    description: 'Acts on what the person asked.',
    parameters,
    readOnly: true,
    requiresApproval: () => 'never',
    async execute(params, ctx) {
      acts.push({ userId: ctx.userId, words: params.words });
      return 'done';
    },
  };
  return tool as unknown as Tool;
}

/** The model: calls `act_on` with the latest user message it is shown, then answers with the words it acted on. */
export function actOnLatest(request: FakeLlmRequest): FakeLlmEntry {
  const last = request.messages[request.messages.length - 1]!;
  if (last.role === 'user') return toolCallReply([{ name: 'act_on', arguments: { words: String(last.content) } }]);
  const latestUser = [...request.messages].reverse().find((message) => message.role === 'user');
  return textReply(`acted on: ${String(latestUser?.content)}`);
}
