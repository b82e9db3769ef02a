import { describe, expect, it } from 'vitest';
import { TOOL_INTENT_NUDGE, signalsToolIntent } from '../../../src/engine/guards/tool-intent.js';

const LONG_ANSWER =
  'The Eiffel Tower is 330 metres tall and was completed in 1889 for the World Fair. ' +
  'It was designed by the engineering company of Gustave Eiffel and was the tallest structure in the world for 41 years. ' +
  'Today it receives around seven million visitors a year, most of whom take the lifts to the top.';

describe('signalsToolIntent: announcements', () => {
  it.each([
    'Let me search for that.',
    "I'll check the file.",
    'I will run the command now.',
    'Let me look that up.',
    "I'm going to fetch the page.",
    'Let me just quickly check the logs for you.',
    'Sure! Let me search the web for the latest release notes.',
    'I am going to read the configuration file first.',
    'Let me go ahead and run the tests.',
    "Good question. I'll look into it right away.",
    "I’ll search for that now.",
    'Let me try to fetch the current exchange rate.',
    "Let's search the docs for that option.",
    'I need to check the calendar before answering.',
    "I'm checking the repository now...",
    'I am searching for recent articles on this.',
    'One moment while I look it up.',
    "I'll do a quick search.",
    'Let me see what I can find.',
    'I will use the web_search tool to find it.',
    "I'll write it to notes.txt.",
    'Let me create a new file with the summary.',
    'Let me get the latest numbers.',
    'I will now execute the script.',
    'Lemme grab the page.',
    `${LONG_ANSWER} Next, I will look up the ticket prices.`,
    `Here is what I know so far. ${LONG_ANSWER}\n\nLet me verify the opening hours.`,
    'Let me check the file. This may take a moment.',
  ])('detects %j', (text) => {
    expect(signalsToolIntent(text)).toBe(true);
  });
});

describe('signalsToolIntent: exclusions', () => {
  it.each([
    'Let me explain how this works.',
    'Let me know if you need anything else.',
    'Let me clarify what I meant.',
    'Let me think about this for a second.',
    "I'll be happy to help with that!",
    'Let me summarize the main points: the plan is cheap, fast and simple.',
    'Let me break it down for you.',
    'I will walk you through the steps.',
    '',
    '   ',
    'The answer is 42.',
    'I checked the file and it contains three lines.',
    "I've searched the web and found two results.",
    'I cannot run commands on your machine.',
    "I won't delete anything without your approval.",
    'Would you like me to search for that?',
    'Shall I run the tests?',
    'Should I check the logs?',
    "If you'd like, I can search for more details.",
    "If you want, I'll search for more sources.",
    "I'll search for more details if you'd like.",
    'You can run the command yourself.',
    'Let me calculate: 3 times 4 is 12.',
    "I'll get back to you on that.",
    `Let me check the facts. ${LONG_ANSWER}`,
    `${LONG_ANSWER.slice(0, 150)} Let me search for it later, I thought. ${LONG_ANSWER}`,
  ])('ignores %j', (text) => {
    expect(signalsToolIntent(text)).toBe(false);
  });

  it('ignores announcements inside quotes', () => {
    expect(signalsToolIntent('Models often say "let me search for that" without searching.')).toBe(false);
    expect(signalsToolIntent('The phrase “I\'ll check the file” is a common one.')).toBe(false);
    expect(signalsToolIntent("Avoid replies like 'let me look that up' when you can answer.")).toBe(false);
    expect(signalsToolIntent('> Let me search for that.\n\nThat is what the bot said.')).toBe(false);
  });

  it('ignores announcements inside code', () => {
    expect(signalsToolIntent('Print it with `console.log("let me search")` and you are done.')).toBe(false);
    expect(signalsToolIntent('Here is the script:\n```python\n# I will run the command now\nrun()\n```')).toBe(false);
    expect(signalsToolIntent('Here is the script:\n```\nLet me fetch the page.\n```\nThat prints a line.')).toBe(false);
  });

  it('ignores announcements made only while reasoning', () => {
    expect(signalsToolIntent('<think>Let me search for that.</think>Paris is the capital of France.')).toBe(false);
  });

  it('still detects an announcement next to code', () => {
    expect(signalsToolIntent('I will run `npm test` now.')).toBe(true);
  });
});

describe('TOOL_INTENT_NUDGE', () => {
  it('tells the model to make a structured call or answer directly', () => {
    expect(TOOL_INTENT_NUDGE).toMatch(/tool call/);
    expect(TOOL_INTENT_NUDGE).toMatch(/answer the user directly/);
  });
});
