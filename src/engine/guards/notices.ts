/**
 * Messages the engine adds to the conversation to steer the model. Our own
 * wording; kept together so their tone stays consistent.
 */

/** After tool calls were cut off by the output limit and discarded. */
export const TRUNCATED_CALLS_NOTICE =
  'Your previous reply was cut off by the output length limit while you were writing tool calls, so none of them were run. ' +
  'Do not repeat the same large call. Break the work into smaller steps, send shorter arguments, or answer in text.';

/** After the same failing batch came back again. */
export const REPEATED_FAILURE_NOTICE =
  'You have sent the same tool calls with the same arguments again, and they failed again in the same way. ' +
  'Repeating them will not help. Read the error, change the arguments or use a different tool, or explain the problem to the user.';

/** After the same answer came back in a run that goes on after answers (a job). */
export const REPEATED_ANSWER_NOTICE =
  'You have given the same answer again, and it does not move the work on. ' +
  'Take a different step with your tools, or give your final answer.';

/** After the same successful batch came back several times. */
export const REPEATED_SUCCESS_NOTICE =
  'You have made the same tool call with the same arguments several times in a row and already have its result. ' +
  'Use the results you have: answer the user or take a different step.';

/** The line after an answer that was still cut by the output limit after its continuations. */
export const TRUNCATED_ANSWER_NOTE = '(This answer was cut off by the length limit of a reply. Ask me to go on if you need the rest.)';

/** One round before the chat tool-iteration cap. */
export const LAST_TOOL_ROUND_NOTICE =
  'You are about to reach the limit of tool calls for this message. Do not call more tools: answer the user now with what you have.';

/** What the person reads when a turn used up its tool rounds without an answer. */
export function roundsExhaustedMessage(rounds: number): string {
  return `I stopped after ${rounds} rounds of tool use without reaching an answer. Tell me how to narrow it down and I will continue.`;
}

/** What the person reads when a turn stops because the model was going in circles. */
export function loopStoppedMessage(summary: string): string {
  return `I stopped here because I was going in circles: ${summary.replace(/\.?$/, '.')} Tell me how you would like me to go on.`;
}
