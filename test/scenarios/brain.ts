/**
 * A deterministic fake model for the scenarios. It reads the last user message
 * (or the tool results that follow it) and answers by simple phrases:
 *
 * - `calc EXPR`: calls calculator; `note TEXT`: calls note_write; `danger X`: calls danger;
 * - `slow MS`: calls slow; `hang`: never answers; `loop`: calls a tool forever, offered or not;
 * - `batch`: note_write "first", calculator 2+2, note_write "second" in one batch;
 * - `long`: a 10,000-character answer of 20 paragraphs that reuse the same phrases; `table`: a 60-row table;
 * - `cycle`: calculator 1+1, then 2+2, then 1+1... (a cycle of two calls) until told to try another way;
 * - `nosuch`: calls a tool that does not exist, the same way, while tools are offered; then answers in text;
 * - `fail N`: the first N requests for it answer 500; `read PATH`: calls files_read;
 * - anything else: `echo: <text>`; after tool results: `result: <results>`.
 */
import type { FakeLlmEntry, FakeLlmRequest } from '../fakes/llm/server.js';
import { hang, serverError, textOf, textReply, toolCallReply } from '../fakes/llm/server.js';

/** The fake model's memory across requests (failures served so far). */
export class Brain {
  private failures = new Map<string, number>();

  /** Answers one request. */
  respond = (request: FakeLlmRequest): FakeLlmEntry => {
    const messages = request.messages;
    // A background job (its system prompt says so): one calculator call, then the report.
    if (/background job/.test(String(messages[0]?.content ?? ''))) {
      const results = messages.filter((message) => message.role === 'tool').map((message) => unwrap(String(message.content)));
      return results.length ? textReply(`DONE: the job found ${results.join(' | ')}`) : toolCallReply([{ name: 'calculator', arguments: { expression: '6*7' } }]);
    }
    const last = messages[messages.length - 1];
    if (last?.role === 'user' && String(last.content).startsWith('The user saw that you were repeating')) return textReply('ok, trying another way');
    if (last?.role === 'tool') return this.afterTools(request);
    const text = lastUserText(messages);
    return this.forText(text, request);
  };

  private forText(raw: string, request: FakeLlmRequest): FakeLlmEntry {
    // The lines describing attached files come after the text.
    const text = raw.replace(/^\[[^\]]*\]\s*/, '').split('\n[attached:')[0]!.trim();
    const offered = new Set((request.tools ?? []).map((tool) => tool.function.name));
    const command = /^(calc|note|danger|slow|hang|loop|batch|fail|cycle|nosuch|long|table|stream|bg|daily|read)\b\s*(.*)$/i.exec(text);
    if (!command) return textReply(`echo: ${text}`);
    const [, verb, rest] = command as unknown as [string, string, string];
    const call = (name: string, args: Record<string, unknown>) =>
      offered.has(name) ? toolCallReply([{ name, arguments: args }]) : textReply(`no tool ${name} offered`);
    switch (verb.toLowerCase()) {
      case 'calc':
        return call('calculator', { expression: rest });
      case 'note':
        return call('note_write', { text: rest });
      case 'danger':
        return call('danger', { target: rest });
      case 'slow':
        return call('slow', { ms: Number(rest) || 10_000 });
      case 'hang':
        return hang();
      case 'cycle':
        return cycleStep(request.messages);
      case 'nosuch':
        return unknownToolStep(request);
      case 'long':
        return textReply(LONG_ANSWER);
      case 'table':
        return textReply(TABLE_ANSWER);
      case 'read':
        return call('files_read', { path: rest });
      case 'daily':
        return call('schedule', { message: rest || 'stand up', cron: '0 9 * * *' });
      case 'bg':
        return call('create_job', { title: rest || 'multiply', goal: `work out 6*7 (${rest})`, tools: ['calculator'] });
      case 'stream':
        // About 3 s of output: long enough for the bot to show the answer while it is being written.
        return textReply(STREAMED_ANSWER, { chunkSize: 20, chunkDelayMs: 100 });
      case 'loop':
        return call('calculator', { expression: `${Math.floor(Math.random() * 1e6)} + 1` });
      case 'batch':
        return toolCallReply([
          { name: 'note_write', arguments: { text: 'first' } },
          { name: 'calculator', arguments: { expression: '2+2' } },
          { name: 'note_write', arguments: { text: 'second' } },
        ]);
      default: {
        const served = this.failures.get(text) ?? 0;
        const wanted = Number(rest) || 1;
        if (served < wanted) {
          this.failures.set(text, served + 1);
          return serverError(500);
        }
        return textReply(`recovered after ${wanted} failures`);
      }
    }
  }

  private afterTools(request: FakeLlmRequest): FakeLlmEntry {
    const messages = request.messages;
    const results: string[] = [];
    for (let i = messages.length - 1; i >= 0 && messages[i]!.role === 'tool'; i--) {
      results.unshift(String(messages[i]!.content));
    }
    const lastUser = lastUserText(messages);
    // A runaway model: it calls the tool again whether or not any tool is still offered.
    if (/^(\[[^\]]*\]\s*)?loop/i.test(lastUser)) {
      return toolCallReply([{ name: 'calculator', arguments: { expression: `${messages.length} + 1` } }]);
    }
    if (/^(\[[^\]]*\]\s*)?cycle/i.test(lastUser)) return cycleStep(messages);
    if (/^(\[[^\]]*\]\s*)?nosuch/i.test(lastUser)) return unknownToolStep(request);
    return textReply(`result: ${results.map(unwrap).join(' | ')}`);
  }
}

/** The text of the last user message (injected notices from the engine skipped). */
export function lastUserText(messages: FakeLlmRequest['messages']): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    // A message with images comes as parts: its text is what is answered.
    const text = message.role === 'user' ? textOf(message.content) : '';
    if (message.role === 'user' && !isEngineNotice(text)) return text;
  }
  return '';
}

function isEngineNotice(text: string): boolean {
  return /^(You are about to reach|You have sent the same|You have made the same|Your previous reply|You are going in circles|You are starting to repeat)/.test(text);
}

/** The `long` answer: 20 paragraphs, each marked "part N", all reusing the same phrases. */
export const LONG_ANSWER = Array.from(
  { length: 20 },
  (_, i) => `As noted before, the key point of part ${i + 1} is that we check the inputs and then we check the outputs again. ` + 'As noted before, this matters. '.repeat(14),
).join('\n\n');

/** The `stream` answer: 12 numbered sentences, slowly streamed. */
export const STREAMED_ANSWER = Array.from({ length: 12 }, (_, i) => `Sentence ${i + 1} of the streamed answer goes on for a while.`).join(' ');

/** The `table` answer: 60 rows of the same item. */
export const TABLE_ANSWER = ['Here is the table:', '', '| # | item | state |', '| --- | --- | --- |', ...Array.from({ length: 60 }, (_, i) => `| ${i + 1} | same item | ok |`)].join('\n');

/** The next call of the `cycle` command: calculator 1+1 and 2+2 in turn. */
function cycleStep(messages: FakeLlmRequest['messages']): FakeLlmEntry {
  const calls = messages.filter((message) => message.role === 'tool').length;
  return toolCallReply([{ name: 'calculator', arguments: { expression: calls % 2 === 0 ? '1+1' : '2+2' } }]);
}

/** The `nosuch` answer once no tool is offered. */
export const NO_SUCH_TOOL_ANSWER = 'I have no tool that looks this up, so from memory: tides follow the moon.';

/** The next reply of the `nosuch` command: the same call of a tool that does not exist, or text once no tool is offered. */
function unknownToolStep(request: FakeLlmRequest): FakeLlmEntry {
  if (!request.tools?.length) return textReply(NO_SUCH_TOOL_ANSWER);
  return toolCallReply([{ name: 'web_lookup', arguments: { query: 'tides' } }]);
}

/** Tool output arrives wrapped as untrusted data; the scenarios only need its core. */
function unwrap(content: string): string {
  return content.replace(/\s+/g, ' ').trim();
}
