/**
 * Reassembling a streamed completion: text deltas are forwarded as they arrive,
 * tool-call fragments are joined by their `index` into whole calls.
 */
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { ToolCall } from './types.js';
import { toFinishReason, toUsage, type ParsedCompletion } from './wire.js';

type ToolCallDelta = NonNullable<ChatCompletionChunk.Choice.Delta['tool_calls']>[number];

/** Collects the chunks of one streamed completion. */
export class StreamAssembler {
  private content = '';
  private readonly calls = new Map<number, ToolCall>();
  private rawFinish: string | null = null;
  private usage: ChatCompletionChunk['usage'] = undefined;
  private model: string | undefined;
  private chunks = 0;

  /** @param onTextDelta receives each non-empty text delta, in order */
  constructor(private readonly onTextDelta: (delta: string) => void) {}

  /** Folds one chunk in. */
  add(chunk: ChatCompletionChunk): void {
    this.chunks += 1;
    this.model ||= chunk.model || undefined;
    if (chunk.usage) this.usage = chunk.usage;
    // The usage chunk of `include_usage` has an empty `choices` array.
    const choice = chunk.choices?.[0];
    if (!choice) return;
    const text = choice.delta?.content;
    if (text) {
      this.content += text;
      this.onTextDelta(text);
    }
    for (const delta of choice.delta?.tool_calls ?? []) this.addToolCallDelta(delta);
    if (choice.finish_reason) this.rawFinish = choice.finish_reason;
  }

  /** Whether any chunk arrived (a server that ignores `stream: true` sends none). */
  get empty(): boolean {
    return this.chunks === 0;
  }

  /** The completion the chunks so far add up to. */
  result(): ParsedCompletion {
    // Calls without an id get one at the provider boundary (call-ids.ts).
    const toolCalls = [...this.calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => ({ ...call }));
    return {
      content: this.content,
      toolCalls,
      finishReason: toFinishReason(this.rawFinish, toolCalls.length > 0),
      usage: toUsage(this.usage),
      model: this.model,
    };
  }

  private addToolCallDelta(delta: ToolCallDelta): void {
    const index = delta.index ?? this.calls.size;
    let call = this.calls.get(index);
    if (!call) {
      call = { id: '', name: '', arguments: '' };
      this.calls.set(index, call);
    }
    // The id and name arrive once, in the first fragment; some servers repeat
    // them in every fragment, so they are set rather than appended.
    if (delta.id && !call.id) call.id = delta.id;
    if (delta.function?.name && !call.name) call.name = delta.function.name;
    if (delta.function?.arguments) call.arguments += delta.function.arguments;
  }
}
