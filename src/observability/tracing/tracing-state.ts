/**
 * Whether this process traces, for the code that behaves differently when it does (the log lines' trace ids, the
 * flush at shutdown). Kept apart from the SDK so that reading it loads none of it.
 */
let stop: (() => Promise<void>) | undefined;

/** True when the operator asked for traces: an OTLP endpoint is set and the SDK is not disabled. */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  return Boolean(endpoint) && env.OTEL_SDK_DISABLED?.trim().toLowerCase() !== 'true';
}

export function tracingStarted(): boolean {
  return stop !== undefined;
}

export function markTracingStarted(shutdown: () => Promise<void>): void {
  stop = shutdown;
}

/** Exports the spans still queued and stops the SDK; nothing when tracing is off. */
export async function stopTracing(): Promise<void> {
  await stop?.();
}
