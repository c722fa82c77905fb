import type { Attributes } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';

type Scrub = (text: string) => string;

function scrubAttributes<A extends Attributes | undefined>(attributes: A, scrub: Scrub): A {
  if (!attributes) return attributes;
  const scrubValue = (value: unknown) => (typeof value === 'string' ? scrub(value) : value);
  const entries = Object.entries(attributes);
  return Object.fromEntries(
    entries.map(([key, value]) => [key, Array.isArray(value) ? value.map(scrubValue) : scrubValue(value)]),
  ) as A;
}

/**
 * Hands the exporter a scrubbed view of every span (name, status message, attribute values, events and links), the
 * span the SDK holds left as it was: as the log lines' scrubber, the last line of defence before the collector.
 */
export class RedactingSpanExporter implements SpanExporter {
  constructor(
    private readonly exporter: SpanExporter,
    private readonly scrub: Scrub,
  ) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    const scrub = this.scrub;
    const scrubbed = spans.map((span): ReadableSpan =>
      // Every other field and method is read through to the original.
      Object.assign(Object.create(span) as ReadableSpan, {
        name: scrub(span.name),
        status:
          span.status.message === undefined ? span.status : { ...span.status, message: scrub(span.status.message) },
        attributes: scrubAttributes(span.attributes, scrub),
        links: span.links.map((link) => ({ ...link, attributes: scrubAttributes(link.attributes, scrub) })),
        events: span.events.map((event) => ({
          ...event,
          name: scrub(event.name),
          attributes: scrubAttributes(event.attributes, scrub),
        })),
      }),
    );
    this.exporter.export(scrubbed, resultCallback);
  }

  shutdown = () => this.exporter.shutdown();
  forceFlush = () => this.exporter.forceFlush?.() ?? Promise.resolve();
}
