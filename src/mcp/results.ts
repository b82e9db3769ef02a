/**
 * An MCP tool result as text for the model: text as is; images, audio and
 * resources summarised (type, size, name), never their bytes. What a server
 * says when a call fails (an error result, a protocol error) is its own text
 * too, so it reaches the model bounded, redacted, defused and wrapped as
 * untrusted data, exactly like output.
 */
import { ToolError } from '../errors.js';
import { sanitizeToolOutput } from '../safety/sanitize.js';
import type { Redactor } from '../safety/secrets.js';

/**
 * Characters of a wrapped error: the pipeline keeps at most 2,000 of an error
 * message, and the closing tag of the wrapper must survive that cut.
 */
const ERROR_CHARS = 1_600;
/** Room for the wrapper, its notice and the truncation note. */
const WRAPPER_CHARS = 300;

/** One item of an MCP tool result, as far as pincer reads it. */
export interface McpContent {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  uri?: string;
  name?: string;
  resource?: { uri?: string; mimeType?: string; text?: string; blob?: string };
}

/** The text of a result's content. */
export function resultText(content: readonly McpContent[] | undefined, structured?: unknown): string {
  const parts = (content ?? []).map(describeContent).filter((part) => part.length > 0);
  if (!parts.length && structured !== undefined) return JSON.stringify(structured);
  return parts.join('\n') || '(no content)';
}

function describeContent(item: McpContent): string {
  switch (item.type) {
    case 'text':
      return item.text ?? '';
    case 'image':
    case 'audio':
      return `[${item.type}: ${item.mimeType ?? 'unknown type'}, ${formatBytes(base64Bytes(item.data))}]`;
    case 'resource': {
      const resource = item.resource ?? {};
      const size = resource.text !== undefined ? `${resource.text.length} characters` : formatBytes(base64Bytes(resource.blob));
      const head = `[resource: ${resource.uri ?? 'no uri'} (${resource.mimeType ?? 'unknown type'}), ${size}]`;
      return resource.text !== undefined ? `${head}\n${resource.text}` : head;
    }
    case 'resource_link':
      return `[resource link: ${item.name ?? item.uri ?? 'unnamed'}${item.uri ? ` ${item.uri}` : ''}${item.mimeType ? ` (${item.mimeType})` : ''}]`;
    default:
      return `[${item.type} content]`;
  }
}

function base64Bytes(data: string | undefined): number {
  if (!data) return 0;
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * The error the model reads when a server reports a failure: the server's text
 * (an error result's content, a protocol error's message) as untrusted data.
 *
 * @example
 * if (result.isError) throw serverError('search', 'search__query', resultText(result.content), redactor);
 */
export function serverError(server: string, tool: string, text: string, redactor: Redactor): ToolError {
  return new ToolError(`the MCP server ${server} reported an error; its message follows.\n${boundedWrapped(tool, text, redactor)}`);
}

/** The text wrapped as tool output, cut further while defusing markers made it longer than {@link ERROR_CHARS}. */
function boundedWrapped(tool: string, text: string, redactor: Redactor): string {
  let maxChars = ERROR_CHARS - WRAPPER_CHARS;
  let wrapped = sanitizeToolOutput(tool, text, { maxChars, redactor });
  while (wrapped.length > ERROR_CHARS && maxChars > 100) {
    maxChars = Math.floor(maxChars / 2);
    wrapped = sanitizeToolOutput(tool, text, { maxChars, redactor });
  }
  return wrapped;
}
