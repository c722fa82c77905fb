import { context, trace } from '@opentelemetry/api';

/** A pino `mixin`: the trace and span ids of the span active when a line is written (inside a request). */
export function traceIds(): { trace_id?: string; span_id?: string } {
  const span = trace.getSpan(context.active());
  if (span === undefined) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}
