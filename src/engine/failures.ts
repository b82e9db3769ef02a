/**
 * What a person reads when a model call fails for good, for a chat turn and a
 * background job alike; the details stay in the logs.
 */
import { LlmError } from '../errors.js';

/** The short, honest message a person sees when a turn fails; details stay in the logs. */
export function failureMessage(error: unknown): string {
  if (error instanceof LlmError) {
    if (error.status === 404) return 'Sorry, I cannot reach the language model: its endpoint answered 404 (not found). The bot owner needs to check that the base URL ends in /v1 and that the model name exists there.';
    switch (error.kind) {
      case 'rate_limit':
        return 'Sorry, the language model is rate-limiting me right now and retries did not help. Please try again in a minute.';
      case 'auth':
        return 'Sorry, I cannot reach the language model: it rejected my credentials. The bot owner needs to check the API key.';
      case 'context_length':
        return 'Sorry, this conversation has grown too long for the model even after summarising. Use /new to start fresh.';
      case 'timeout':
      case 'connection':
      case 'server':
        return 'Sorry, the language model is not answering right now (it failed several times in a row). Please try again in a moment.';
      default:
        return 'Sorry, the language model returned an error I could not work around. Please try again.';
    }
  }
  return 'Sorry, something went wrong on my side while answering. Please try again.';
}
