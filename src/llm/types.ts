/**
 * The shapes that cross the boundary between the agent and a model provider.
 * They follow the OpenAI Chat Completions wire format, which every supported
 * endpoint speaks, without depending on the SDK's own types.
 */

/** One tool call requested by the model. `arguments` is the raw JSON text the model wrote. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** A message of the conversation as the model sees it. */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string; name?: string }
  | { role: 'assistant'; content: string | null; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string };

/** A tool offered to the model: its name, what it does and a JSON Schema of its parameters. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** Why the model stopped producing output. */
export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter';

/** Tokens used by one call. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
}

/** What one model call returned. */
export interface LlmResponse {
  content: string;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  usage: Usage;
  /** Cost in US dollars from the price table; 0 when the model has no price. */
  costUsd: number;
  model: string;
}

/** One request to the model. */
export interface LlmRequest {
  messages: ChatMessage[];
  /** Tools offered; empty or absent means the model must answer in text. */
  tools?: ToolDefinition[];
  maxTokens?: number;
  temperature?: number;
  signal?: AbortSignal;
  /** Called with each text delta while streaming; its presence turns streaming on. */
  onTextDelta?: (delta: string) => void;
}

/** Anything that can answer a chat-completion request. */
export interface LlmProvider {
  readonly model: string;
  complete(request: LlmRequest): Promise<LlmResponse>;
}

/** Usage with zeroes, for accumulating. */
export const emptyUsage = (): Usage => ({ inputTokens: 0, outputTokens: 0, cachedTokens: 0 });
