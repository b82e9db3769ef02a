/**
 * Exports each finished trace through OpenTelemetry when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is set (OTLP over HTTP; the exporter reads
 * the standard OTEL_* variables for headers and timeouts). A turn becomes an
 * `invoke_agent` span with its model calls (`chat <model>`) and tool calls
 * (`execute_tool <name>`) as children, named and attributed after the GenAI
 * semantic conventions; approval waits and deliveries are children too. The
 * SDK is loaded only here, and this module only when the variable is set.
 */
import { context, SpanKind as OtelSpanKind, SpanStatusCode, trace as otelTrace, type Attributes } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Logger } from '../../log.js';
import type { Trace, TraceReader, TraceSpan } from './types.js';

/** What the exporter is told of this program. */
export interface ExportOptions {
  agentName: string;
  version: string;
  instance?: string;
  log: Logger;
  /** The longest a finished trace waits before it is sent (the SDK's batch delay). */
  delayMs?: number;
}

/** A running export: stop it to send what is left. */
export interface TraceExport {
  close(): Promise<void>;
}

/** Sends every trace `reader` finishes to the OTLP endpoint of the environment. */
export function exportTraces(reader: TraceReader, options: ExportOptions): TraceExport {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      'service.name': process.env.OTEL_SERVICE_NAME ?? 'pincer',
      'service.version': options.version,
      ...(options.instance ? { 'service.instance.id': options.instance } : {}),
    }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter(), { scheduledDelayMillis: options.delayMs ?? 5_000 })],
  });
  const tracer = provider.getTracer('pincer', options.version);
  const stop = reader.onTrace((finished) => {
    try {
      const root = tracer.startSpan(rootName(finished, options.agentName), { startTime: finished.startedAt, kind: OtelSpanKind.INTERNAL, attributes: rootAttributes(finished, options.agentName) });
      if (failed(finished.outcome)) root.setStatus({ code: SpanStatusCode.ERROR, message: finished.outcome });
      const parent = otelTrace.setSpan(context.active(), root);
      for (const span of finished.spans) {
        const child = tracer.startSpan(spanName(span), { startTime: span.startedAt, kind: span.kind === 'model' || span.kind === 'compaction' ? OtelSpanKind.CLIENT : OtelSpanKind.INTERNAL, attributes: spanAttributes(span) }, parent);
        if (span.error) child.setStatus({ code: SpanStatusCode.ERROR, message: span.error });
        child.end(span.startedAt + span.durationMs);
      }
      root.end(finished.startedAt + finished.durationMs);
    } catch (error) {
      options.log.warn({ err: error }, 'could not export a trace');
    }
  });
  return {
    async close() {
      stop();
      await provider.shutdown().catch((error: unknown) => options.log.warn({ err: error }, 'could not send the last traces'));
    },
  };
}

function failed(outcome: string): boolean {
  return ['error', 'failure', 'failed'].includes(outcome);
}

function rootName(trace: Trace, agent: string): string {
  if (trace.kind === 'turn') return `invoke_agent ${agent}`;
  return trace.kind === 'job_step' ? `job_step ${trace.thread}` : `routine ${trace.thread}`;
}

function rootAttributes(trace: Trace, agent: string): Attributes {
  return {
    'gen_ai.operation.name': trace.kind === 'turn' ? 'invoke_agent' : trace.kind,
    'gen_ai.agent.name': agent,
    'gen_ai.conversation.id': trace.thread,
    'pincer.trace.id': trace.id,
    'pincer.outcome': trace.outcome,
    ...(trace.userId ? { 'enduser.id': trace.userId } : {}),
  };
}

function spanName(span: TraceSpan): string {
  if (span.kind === 'model' || span.kind === 'compaction') return `chat ${span.name}`;
  if (span.kind === 'tool') return `execute_tool ${span.name}`;
  return span.name;
}

function spanAttributes(span: TraceSpan): Attributes {
  const { attributes } = span;
  if (span.kind === 'model' || span.kind === 'compaction') {
    return {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': span.name,
      'gen_ai.usage.input_tokens': Number(attributes.inputTokens ?? 0),
      'gen_ai.usage.output_tokens': Number(attributes.outputTokens ?? 0),
      'pincer.purpose': String(attributes.purpose ?? span.kind),
      ...(attributes.costUsd !== undefined ? { 'pincer.cost_usd': Number(attributes.costUsd) } : {}),
    };
  }
  if (span.kind === 'tool') return { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': span.name, 'pincer.tool.status': String(attributes.status ?? '') };
  const copied: Attributes = { 'pincer.span.kind': span.kind };
  for (const [key, value] of Object.entries(attributes)) copied[`pincer.${key}`] = value;
  return copied;
}
