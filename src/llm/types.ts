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

/**
 * An image sent with a user message. The conversation keeps only a reference
 * to the file in its workspace, never the bytes, so that a thread's stored
 * history stays small; the image itself (`dataUrl`) is put on the copy of the
 * message a request sends, and sent after the message's text as an
 * `image_url` part.
 */
export interface ImagePart {
  /** Where the image was saved, relative to the conversation's workspace: `attachments/photo.jpg`. */
  path: string;
  /** Its type, sniffed from the bytes. */
  mimeType: string;
  /** The thread's turn it came in (its count of turns then): only the latest turns' images are sent again. */
  turn: number;
  /** The image, downscaled, as a `data:` URL: only on a message being sent, never in the stored history. */
  dataUrl?: string;
}

/** What a request counts an image sent to the model as, in tokens (providers charge roughly this much for one). */
export const IMAGE_TOKEN_ESTIMATE = 1_000;

/** The images a message sends to the model (those with their bytes attached). */
export function imagesSent(message: ChatMessage): number {
  return message.role === 'user' ? (message.images?.filter((image) => image.dataUrl).length ?? 0) : 0;
}

/** A message of the conversation as the model sees it. */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string; name?: string; images?: ImagePart[] }
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
