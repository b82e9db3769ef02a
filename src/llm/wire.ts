/**
 * Translation between pincer's chat shapes (camelCase, `toolCalls`) and the
 * Chat Completions wire format the openai SDK sends and receives.
 */
import type {
  ChatCompletion,
  ChatCompletionContentPart,
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import type { ChatMessage, FinishReason, ImagePart, ToolCall, ToolDefinition, Usage } from './types.js';
import { emptyUsage } from './types.js';

/** Our message as the wire expects it. */
export function toWireMessage(message: ChatMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user': {
      const content = userContent(message.content, message.images);
      return message.name ? { role: 'user', content, name: message.name } : { role: 'user', content };
    }
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
    case 'assistant':
      // Several local servers reject an empty `tool_calls` array, so it is left out.
      return message.toolCalls?.length
        ? { role: 'assistant', content: message.content, tool_calls: message.toolCalls.map(toWireToolCall) }
        : { role: 'assistant', content: message.content ?? '' };
  }
}

/**
 * A user message's content: its text alone, or with images whose bytes are
 * attached, the text first and each image after it as an `image_url` part.
 * An image without its bytes sends nothing (the request says why in the text).
 */
function userContent(text: string, images: readonly ImagePart[] | undefined): string | ChatCompletionContentPart[] {
  const sent = images?.filter((image) => image.dataUrl) ?? [];
  if (!sent.length) return text;
  const parts: ChatCompletionContentPart[] = text ? [{ type: 'text', text }] : [];
  for (const image of sent) parts.push({ type: 'image_url', image_url: { url: image.dataUrl! } });
  return parts;
}

function toWireToolCall(call: ToolCall): ChatCompletionMessageToolCall {
  return { id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } };
}

/** A tool offered to the model, as a function tool. */
export function toWireTool(tool: ToolDefinition): ChatCompletionTool {
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } };
}

/**
 * Our finish reason for the wire's. Servers that report `stop` alongside tool
 * calls (Ollama, some llama.cpp builds) are normalised to `tool_calls`; a
 * truncation stays `length` so the loop never runs cut-off arguments.
 */
export function toFinishReason(raw: string | null | undefined, hasToolCalls: boolean): FinishReason {
  if (raw === 'length' || raw === 'content_filter') return raw;
  // `tool_calls` without any call (or an unknown reason) leaves nothing to run: a plain stop.
  return hasToolCalls ? 'tool_calls' : 'stop';
}

/** Token counts of the wire's usage block; zeroes when the server sent none. */
export function toUsage(usage: CompletionUsage | null | undefined): Usage {
  if (!usage) return emptyUsage();
  return {
    inputTokens: usage.prompt_tokens ?? 0,
    outputTokens: usage.completion_tokens ?? 0,
    cachedTokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
  };
}

/** The function calls of a non-streamed reply; custom (non-function) calls are not offered, so skipped. */
export function toToolCalls(calls: ChatCompletionMessageToolCall[] | undefined): ToolCall[] {
  const result: ToolCall[] = [];
  for (const call of calls ?? []) {
    if (call.type !== 'function') continue;
    // A missing id is filled in at the provider boundary (call-ids.ts).
    result.push({ id: call.id ?? '', name: call.function.name, arguments: call.function.arguments ?? '' });
  }
  return result;
}

/** The parts of a non-streamed completion the provider needs. */
export interface ParsedCompletion {
  content: string;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  usage: Usage;
  model: string | undefined;
}

/** Reads the first choice of a non-streamed completion. */
export function parseCompletion(completion: ChatCompletion): ParsedCompletion {
  const choice = completion.choices?.[0];
  const toolCalls = toToolCalls(choice?.message?.tool_calls);
  return {
    content: choice?.message?.content ?? '',
    toolCalls,
    finishReason: toFinishReason(choice?.finish_reason, toolCalls.length > 0),
    usage: toUsage(completion.usage),
    model: completion.model || undefined,
  };
}
