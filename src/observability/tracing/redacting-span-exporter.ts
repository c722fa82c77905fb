import type { Attributes } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';

/**
 * Hands the exporter a scrubbed view of every span (name, status message, attribute values, events and links), the
 * span the SDK holds left as it was: as the log lines' scrubber, the last line of defence before the collector.
 */
export class RedactingSpanExporter implements SpanExporter {
  constructor(
    private readonly exporter: SpanExporter,
    private readonly scrub: (text: string) => string,
  ) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    const scrub = this.scrub;
    const text = (value: unknown) => (typeof value === 'string' ? scrub(value) : value);
    const attributes = <A extends Attributes | undefined>(of: A): A =>
      of &&
      (Object.fromEntries(Object.entries(of).map(([k, v]) => [k, Array.isArray(v) ? v.map(text) : text(v)])) as A);
    const scrubbed = spans.map((span): ReadableSpan =>
      // Every other field and method is read through to the original.
      Object.assign(Object.create(span) as ReadableSpan, {
        name: scrub(span.name),
        status:
          span.status.message === undefined ? span.status : { ...span.status, message: scrub(span.status.message) },
        attributes: attributes(span.attributes),
        links: span.links.map((link) => ({ ...link, attributes: attributes(link.attributes) })),
        events: span.events.map((event) => ({
          ...event,
          name: scrub(event.name),
          attributes: attributes(event.attributes),
        })),
      }),
    );
    this.exporter.export(scrubbed, resultCallback);
  }

  shutdown = () => this.exporter.shutdown();
  forceFlush = () => this.exporter.forceFlush?.() ?? Promise.resolve();
}
