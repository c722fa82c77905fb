/**
 * Whether this process traces, for the code that behaves differently when it does (the log lines' trace ids, the
 * flush at shutdown). Kept apart from the SDK so that reading it loads none of it.
 */
import { textScrubber } from '../secret-scrubber.js';

let stop: (() => Promise<void>) | undefined;
let scrub = textScrubber([]);

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

/** Exported spans are scrubbed of these too (the configured keys and metrics token), as the log lines are. */
export function scrubTracesOf(secrets: readonly string[]): void {
  scrub = textScrubber(secrets);
}

/** A span's name or attribute value as it may leave: no key, bearer credential or configured secret in it. */
export function scrubForExport(text: string): string {
  return scrub(text);
}
