import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buffer } from 'node:stream/consumers';
import protobuf from 'protobufjs';
import { pollUntil } from './poll.js';

const SERVER_KIND = 2;

/** A span as the receiver got it, whichever the protocol: ids in hex, attributes as plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  status: { code: number; message: string };
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
  scope: string;
}

/** The part of OTLP's trace schema (opentelemetry-proto, trace/v1 and common/v1) the tests read. */
const TRACE_PROTO = `
syntax = "proto3";
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3;
  double double_value = 4; ArrayValue array_value = 5; } }
message ArrayValue { repeated AnyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message Resource { repeated KeyValue attributes = 1; }
message InstrumentationScope { string name = 1; string version = 2; }
message Status { string message = 2; int32 code = 3; }
message Span { bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4;
  string name = 5; int32 kind = 6; fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9; Status status = 15; }
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
`;
const ExportTraceServiceRequest = protobuf.parse(TRACE_PROTO).root.lookupType('ExportTraceServiceRequest');

interface JsonValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: JsonValue[] };
}
interface JsonRequest {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: JsonValue }[] };
    scopeSpans?: {
      scope?: { name?: string };
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind?: number;
        status?: { code?: number; message?: string };
        attributes?: { key: string; value: JsonValue }[];
      }[];
    }[];
  }[];
}

const plain = (value: JsonValue | undefined): unknown => {
  if (value === undefined) return undefined;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(plain);
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.boolValue ?? value.doubleValue;
};
const attributes = (list: { key: string; value: JsonValue }[] = []) =>
  Object.fromEntries(list.map(({ key, value }) => [key, plain(value)]));

/** The spans of an export request in OTLP/JSON, or in protobuf turned into the same shape. */
function spansOf(contentType: string, body: Buffer): ReceivedSpan[] {
  const json = contentType.startsWith('application/json');
  const request = (
    json
      ? JSON.parse(body.toString('utf8'))
      : ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(body), { longs: String, bytes: String })
  ) as JsonRequest;
  // OTLP/JSON gives ids in hex; protobuf as bytes (base64 here).
  const id = (value = '') => (json ? value : Buffer.from(value, 'base64').toString('hex'));
  return (request.resourceSpans ?? []).flatMap((resourceSpans) =>
    (resourceSpans.scopeSpans ?? []).flatMap((scopeSpans) =>
      (scopeSpans.spans ?? []).map((span) => ({
        traceId: id(span.traceId),
        spanId: id(span.spanId),
        parentSpanId: id(span.parentSpanId),
        name: span.name,
        kind: span.kind ?? 0,
        status: { code: span.status?.code ?? 0, message: span.status?.message ?? '' },
        attributes: attributes(span.attributes),
        resource: attributes(resourceSpans.resource?.attributes),
        scope: scopeSpans.scope?.name ?? '',
      })),
    ),
  );
}

/** A caller's W3C trace context: a new trace id and parent span id each time. */
export function callerContext(): { traceId: string; parentId: string; traceparent: string } {
  const traceId = randomBytes(16).toString('hex');
  const parentId = randomBytes(8).toString('hex');
  return { traceId, parentId, traceparent: `00-${traceId}-${parentId}-01` };
}

export interface OtlpReceiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT (the exporter posts to /v1/traces). */
  endpoint: string;
  spans: ReceivedSpan[];
  /** The spans of one trace, once its SERVER span has arrived. */
  trace(traceId: string): Promise<ReceivedSpan[]>;
  /** The Content-Type of every export request received. */
  contentTypes: string[];
  /** The body of every export request, as it arrived: what the collector would store. */
  bodies: Buffer[];
  /** While false, export requests are read and kept but never answered: a collector hung or overloaded. */
  answering: boolean;
  close(): Promise<void>;
}

/** An OTLP/HTTP trace receiver on 127.0.0.1 that keeps what it is sent, in either protocol. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const server: Server = createServer((request, response) => {
    void buffer(request).then((body) => {
      const contentType = request.headers['content-type'] ?? '';
      receiver.contentTypes.push(contentType);
      receiver.bodies.push(body);
      receiver.spans.push(...spansOf(contentType, body));
      if (receiver.answering)
        response.writeHead(200, { 'content-type': contentType }).end(contentType.includes('json') ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const receiver: OtlpReceiver = {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans: [],
    trace: (traceId) =>
      pollUntil(
        () => {
          const spans = receiver.spans.filter((span) => span.traceId === traceId);
          return spans.some((span) => span.kind === SERVER_KIND) && spans;
        },
        { what: `the spans of trace ${traceId}` },
      ),
    contentTypes: [],
    bodies: [],
    answering: true,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  return receiver;
}
