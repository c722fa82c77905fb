/**
 * Preloaded into the service by the soak script (`node --import`): answers
 * the parent's IPC requests with the service's own event-loop delay and
 * memory, measured inside its process. Never loaded in normal runs.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface ProbeRequest {
  id: number;
  /** Collect garbage first, so heap figures compare live objects, not garbage not yet collected. */
  gc?: boolean;
  /** Start a new event-loop delay window after answering. */
  resetDelay?: boolean;
}

export interface ProbeSample {
  id: number;
  rssBytes: number;
  heapUsedBytes: number;
  eventLoopDelayP50Ms: number;
  eventLoopDelayP99Ms: number;
  eventLoopDelayMaxMs: number;
}

const histogram = monitorEventLoopDelay({ resolution: 10 });
histogram.enable();

process.on('message', (message: ProbeRequest) => {
  if (message.gc) (globalThis as { gc?: () => void }).gc?.();
  const memory = process.memoryUsage();
  const sample: ProbeSample = {
    id: message.id,
    rssBytes: memory.rss,
    heapUsedBytes: memory.heapUsed,
    eventLoopDelayP50Ms: histogram.percentile(50) / 1e6,
    eventLoopDelayP99Ms: histogram.percentile(99) / 1e6,
    eventLoopDelayMaxMs: histogram.max / 1e6,
  };
  process.send?.(sample);
  if (message.resetDelay) histogram.reset();
});
// The IPC channel alone must not keep the service alive.
process.channel?.unref();
