/**
 * What the console's tests share: a tool with a sensitive argument, and a
 * model that calls it for a message starting with "login" and otherwise
 * echoes, and one that repeats a call until the loop guards act.
 */
import { z } from 'zod';
import type { Tool } from '../../../src/tools/types.js';
import { textReply, toolCallReply, type FakeLlmEntry, type FakeLlmRequest } from '../../fakes/llm/server.js';
import { echoAll } from '../../support/app-rig.js';

/** The secret the model sends as `password`: it must never reach a page. */
export const PASSWORD = 'hunter2-correct-horse';

/** `sign_in_site {site, password}`: free to run, `password` sensitive. */
export function signInTool(): Tool {
  const parameters = z.object({ site: z.string(), password: z.string() });
  const tool: Tool<typeof parameters> = {
    name: 'sign_in_site',
    description: 'Signs in to a site.',
    parameters,
    readOnly: true,
    sensitiveParams: ['password'],
    requiresApproval: () => 'never',
    async execute(params) {
      return `signed in to ${params.site}`;
    },
  };
  return tool as unknown as Tool;
}

/** Calls `sign_in_site` for "login SITE", then answers; echoes anything else. */
export function loginModel(request: FakeLlmRequest): FakeLlmEntry {
  const last = request.messages[request.messages.length - 1]!;
  if (last.role === 'user' && String(last.content).includes('login')) {
    const site = /login (\S+)/.exec(String(last.content))?.[1] ?? 'example.org';
    return toolCallReply([{ name: 'sign_in_site', arguments: { site, password: PASSWORD } }]);
  }
  if (last.role === 'tool') return textReply('You are signed in.');
  return echoAll(request);
}

/**
 * For a message with "loop": calls `sign_in_site` with the same arguments
 * whenever tools are offered (the loop guards meet it), text when they are
 * not; a summary for compaction; "ok" to anything else.
 */
export function repeatingModel(request: FakeLlmRequest): FakeLlmEntry {
  if (String(request.messages[0]?.content ?? '').startsWith('Summarise the conversation')) return textReply('They talked about filler.');
  const last = String(request.messages.at(-1)?.content ?? '');
  if (!last.includes('loop') && request.messages.at(-1)?.role === 'user' && !last.startsWith('You ')) return textReply('ok');
  if (!request.tools?.length) return textReply('Here is what I have.');
  return toolCallReply([{ name: 'sign_in_site', arguments: { site: 'example.org', password: PASSWORD } }]);
}
