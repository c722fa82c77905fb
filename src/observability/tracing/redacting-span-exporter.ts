import type { Attributes } from '@opentelemetry/api';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';

/**
 * Hands `exporter` a scrubbed view of every span (name, status message, attribute values, events and links), the
 * span the SDK holds left as it was: as the log lines' scrubber, the last line of defence before the collector.
 */
export function redactingSpanExporter(exporter: SpanExporter, scrub: (text: string) => string): SpanExporter {
  const text = (value: unknown) => (typeof value === 'string' ? scrub(value) : value);
  const attributes = <A extends Attributes | undefined>(of: A): A =>
    of && (Object.fromEntries(Object.entries(of).map(([k, v]) => [k, Array.isArray(v) ? v.map(text) : text(v)])) as A);
  const scrubbed = (span: ReadableSpan): ReadableSpan =>
    // Every other field and method is read through to the original.
    Object.assign(Object.create(span) as ReadableSpan, {
      name: scrub(span.name),
      status: span.status.message === undefined ? span.status : { ...span.status, message: scrub(span.status.message) },
      attributes: attributes(span.attributes),
      links: span.links.map((link) => ({ ...link, attributes: attributes(link.attributes) })),
      events: span.events.map((event) => ({
        ...event,
        name: scrub(event.name),
        attributes: attributes(event.attributes),
      })),
    });
  return {
    export: (spans, resultCallback) => exporter.export(spans.map(scrubbed), resultCallback),
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}
