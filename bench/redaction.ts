/**
 * bench/redaction: what redacting the conversation costs a model request, with
 * the wire forms kept per message (`SentMessages`, what the provider does)
 * against redacting and converting every message again (what every request did
 * before). The history: `iterations` tool rounds, each an assistant message with
 * one call and a 500-character tool result, behind a system prompt and a
 * question. Each request appends one round, as the loop does, then builds the
 * messages; rounds alternate the two ways, medians per request are reported.
 */
import { redactMessages } from '../src/llm/redact-messages.js';
import { SentMessages } from '../src/llm/sent-messages.js';
import type { ChatMessage } from '../src/llm/types.js';
import { toWireMessage } from '../src/llm/wire.js';
import { createRedactor } from '../src/safety/secrets.js';

const SECRET = 'whsec_' + '9f8e7d6c5b4a39281706f5e4d3c2b1a0';

function round(i: number): ChatMessage[] {
  return [
    { role: 'assistant', content: null, toolCalls: [{ id: `call_${i}`, name: 'http_fetch', arguments: JSON.stringify({ url: `https://example.com/page/${i}` }) }] },
    { role: 'tool', toolCallId: `call_${i}`, content: `Result ${i}: ${'lorem ipsum dolor sit amet '.repeat(20)}`.slice(0, 500) },
  ];
}

function history(iterations: number): ChatMessage[] {
  return [
    { role: 'system', content: 'You are pincer. '.repeat(100) },
    { role: 'user', content: 'Read the pages and tell me what they say.' },
    ...Array.from({ length: iterations }, (_, i) => round(i)).flat(),
  ];
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Microseconds per request over `requests` requests, each after one more round. */
function perRequest(iterations: number, requests: number, build: (messages: ChatMessage[]) => unknown): number {
  const messages = history(iterations);
  build(messages);
  const samples: number[] = [];
  for (let i = 0; i < requests; i++) {
    messages.push(...round(iterations + i));
    const start = performance.now();
    build(messages);
    samples.push((performance.now() - start) * 1000);
  }
  return median(samples);
}

/** Runs the benchmark: one row per history length. */
export async function runRedactionBench(lengths: number[] = [10, 200], requests = 50, rounds = 5) {
  const redactor = createRedactor([SECRET]);
  const redact = (text: string) => redactor.redact(text);
  const rows: Record<string, number | string>[] = [];
  for (const iterations of lengths) {
    const again: number[] = [];
    const kept: number[] = [];
    for (let r = 0; r < rounds + 1; r++) {
      const a = perRequest(iterations, requests, (messages) => redactMessages(messages, redact).map(toWireMessage));
      const sent = new SentMessages(redact);
      const b = perRequest(iterations, requests, (messages) => sent.of(messages));
      if (r === 0) continue; // warm-up
      again.push(a);
      kept.push(b);
    }
    const a = median(again);
    const b = median(kept);
    rows.push({ history: `${iterations} tool rounds`, 'every message again (µs/request)': a, 'kept per message (µs/request)': b, ratio: b / a });
  }
  return rows;
}
