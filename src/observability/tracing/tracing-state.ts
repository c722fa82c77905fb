// Whether this process traces, for the code that behaves differently when it does; reading it loads no SDK.
import { textScrubber } from '../secret-scrubber.js';

let stop: (() => Promise<void>) | undefined;
let scrub = textScrubber([]);

export const tracingStarted = () => stop !== undefined;
export const markTracingStarted = (shutdown: () => Promise<void>) => void (stop = shutdown);
/** Exports the spans still queued and stops the SDK; nothing when tracing is off. */
export const stopTracing = async () => stop?.();

/** Exported spans are scrubbed of these too (the configured keys and metrics token), as the log lines are. */
export const scrubTracesOf = (secrets: readonly string[]) => void (scrub = textScrubber(secrets));
export const scrubForExport = (text: string) => scrub(text);
