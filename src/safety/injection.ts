/**
 * Neutralising prompt-injection markers in untrusted text (tool output, fetched
 * pages). The text stays readable for the model; what changes is that it no
 * longer looks like a role switch, a chat-template token or a tool call.
 */

/** One rule: what looks like a marker and what it becomes. */
interface InjectionRule {
  regex: RegExp;
  replace: string | ((match: string, ...groups: string[]) => string);
}

/** Put in place of a phrase that tells the model to drop its instructions. */
export const INJECTION_REMOVED = '[instruction-like text removed]';

// Angle brackets become look-alikes so the text stays legible but is no tag.
const OPEN = '‹';
const CLOSE = '›';

const RULES: readonly InjectionRule[] = [
  // Chat-template special tokens: <|im_start|>, <|endoftext|>, <|system|>.
  { regex: /<\|([^|<>\n]{0,40})\|>/g, replace: (_m, inner: string) => `${OPEN}|${inner}|${CLOSE}` },
  // Llama-style instruction and system markers.
  { regex: /\[(\/?)INST\]/gi, replace: (_m, slash: string) => `(${slash}INST)` },
  { regex: /<<(\/?)SYS>>/gi, replace: (_m, slash: string) => `((${slash}SYS))` },
  // Fake tool-call or role tags.
  {
    regex: /<(\/?)(tool_calls?|tool_use|tool_result|function_calls?|function|invoke|system|assistant|user|developer)\b/gi,
    replace: (_m, slash: string, name: string) => `${OPEN}${slash}${name}`,
  },
  // A line that starts with a role prefix, as in a transcript.
  {
    regex: /^([ \t>#*]{0,8})(system|assistant|user|developer|human|tool)([ \t]{0,4}):/gim,
    replace: (_m, lead: string, role: string, gap: string) => `${lead}(quoted) ${role}${gap}:`,
  },
  // "Ignore all previous instructions" and its cousins.
  {
    regex:
      /\b(?:ignore|disregard|forget|override|bypass)[ \t]{1,4}(?:all[ \t]{1,4}|any[ \t]{1,4})?(?:of[ \t]{1,4})?(?:the[ \t]{1,4}|your[ \t]{1,4}|these[ \t]{1,4})?(?:previous|prior|above|earlier|preceding|system|original)[ \t]{1,4}(?:instructions?|prompts?|messages?|directions?|rules|context)\b/gi,
    replace: INJECTION_REMOVED,
  },
  {
    regex: /\byou[ \t]{1,4}are[ \t]{1,4}now[ \t]{1,4}(?:in[ \t]{1,4})?(?:developer|dan|jailbreak|god)[ \t]{1,4}mode\b/gi,
    replace: INJECTION_REMOVED,
  },
];

/** The text with role prefixes, template tokens, fake tool tags and override phrases defused. */
export function neutraliseInjection(text: string): string {
  let out = text;
  for (const rule of RULES) {
    rule.regex.lastIndex = 0;
    out = out.replace(rule.regex, rule.replace as (substring: string, ...args: string[]) => string);
  }
  return out;
}
