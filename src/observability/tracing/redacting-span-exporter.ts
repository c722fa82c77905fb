import type { Attributes, AttributeValue } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';

type Scrub = (text: string) => string;

function scrubValue(value: AttributeValue | undefined, scrub: Scrub): AttributeValue | undefined {
  if (typeof value === 'string') return scrub(value);
  if (Array.isArray(value)) {
    return value.map((item: unknown) => (typeof item === 'string' ? scrub(item) : item)) as AttributeValue;
  }
  return value;
}

function scrubAttributes(attributes: Attributes, scrub: Scrub): Attributes {
  return Object.fromEntries(Object.entries(attributes).map(([key, value]) => [key, scrubValue(value, scrub)]));
}

/** A copy of the span whose name, status message, attribute values, events and links went through `scrub`. */
export function scrubbedSpan(span: ReadableSpan, scrub: Scrub): ReadableSpan {
  return {
    name: scrub(span.name),
    kind: span.kind,
    spanContext: () => span.spanContext(),
    parentSpanContext: span.parentSpanContext,
    startTime: span.startTime,
    endTime: span.endTime,
    status: span.status.message === undefined ? span.status : { ...span.status, message: scrub(span.status.message) },
    attributes: scrubAttributes(span.attributes, scrub),
    links: span.links.map((link) => ({
      ...link,
      ...(link.attributes && { attributes: scrubAttributes(link.attributes, scrub) }),
    })),
    events: span.events.map((event) => ({
      ...event,
      name: scrub(event.name),
      ...(event.attributes && { attributes: scrubAttributes(event.attributes, scrub) }),
    })),
    duration: span.duration,
    ended: span.ended,
    resource: span.resource,
    instrumentationScope: span.instrumentationScope,
    droppedAttributesCount: span.droppedAttributesCount,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount,
  };
}

/**
 * Hands the exporter a scrubbed copy of every span: the last line of defence before the collector, as the log
 * lines' scrubber is before stdout. Whatever an instrumentation records (a path, a user agent, an error message),
 * nothing shaped like a key or a bearer credential, and no configured secret, leaves the process.
 */
export class RedactingSpanExporter implements SpanExporter {
  constructor(
    private readonly exporter: SpanExporter,
    private readonly scrub: Scrub,
  ) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.exporter.export(
      spans.map((span) => scrubbedSpan(span, this.scrub)),
      resultCallback,
    );
  }

  shutdown(): Promise<void> {
    return this.exporter.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.exporter.forceFlush?.() ?? Promise.resolve();
  }
}
