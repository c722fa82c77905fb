import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { textScrubber } from '../secret-scrubber.js';
import { redactingSpanExporter } from './redacting-span-exporter.js';

const KEY = 'pet_AbCdEfGhIjKlMnOpQrStUvWxYz012345';
const CONFIGURED = 'configured-key-0123456789';
const context = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1 };

function span(overrides: Partial<ReadableSpan>): ReadableSpan {
  return {
    name: 'GET',
    kind: SpanKind.SERVER,
    spanContext: () => context,
    startTime: [1, 0],
    endTime: [2, 0],
    status: { code: SpanStatusCode.UNSET },
    attributes: {},
    links: [],
    events: [],
    duration: [1, 0],
    ended: true,
    resource: resourceFromAttributes({}),
    instrumentationScope: { name: 'test' },
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
    ...overrides,
  };
}

describe('redactingSpanExporter', () => {
  it('hands the exporter spans whose name, attributes, status, events and links carry no key', () => {
    const exported: ReadableSpan[] = [];
    const inner: SpanExporter = {
      export: (spans, done) => {
        exported.push(...spans);
        done({ code: ExportResultCode.SUCCESS });
      },
      shutdown: () => Promise.resolve(),
    };
    const results: ExportResult[] = [];
    const original = span({
      name: `GET /v1/nope/${KEY}`,
      status: { code: SpanStatusCode.ERROR, message: `Bearer ${CONFIGURED}` },
      attributes: {
        'url.path': `/v1/nope/${CONFIGURED}`,
        'user_agent.original': `client ${KEY}`,
        'http.response.status_code': 404,
        'list.of.strings': ['ok', KEY],
      },
      events: [{ name: 'exception', time: [1, 5], attributes: { 'exception.message': `no key ${KEY}` } }],
      links: [{ context, attributes: { from: KEY } }],
    });

    redactingSpanExporter(inner, textScrubber([CONFIGURED])).export([original], (result) => results.push(result));

    expect(results).toEqual([{ code: ExportResultCode.SUCCESS }]);
    const [sent] = exported;
    expect(sent).toMatchObject({
      name: 'GET /v1/nope/[redacted]',
      status: { code: SpanStatusCode.ERROR, message: 'Bearer [redacted]' },
      attributes: {
        'url.path': '/v1/nope/[redacted]',
        'user_agent.original': 'client [redacted]',
        'http.response.status_code': 404,
        'list.of.strings': ['ok', '[redacted]'],
      },
      events: [{ name: 'exception', attributes: { 'exception.message': 'no key [redacted]' } }],
      links: [{ attributes: { from: '[redacted]' } }],
    });
    expect(sent.spanContext()).toBe(context);
    expect(JSON.stringify(sent)).not.toMatch(new RegExp(`${KEY}|${CONFIGURED}`));
    // The span the SDK holds is left as it was.
    expect(original.attributes['url.path']).toBe(`/v1/nope/${CONFIGURED}`);
  });
});
