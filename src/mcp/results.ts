/**
 * An MCP tool result as text for the model: text as is; images, audio and
 * resources summarised (type, size, name), never their bytes.
 */

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
