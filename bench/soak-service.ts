import type { ProbeRequest, ProbeSample } from './soak-probe.js';
import { RunningService, startService } from './server-process.js';

export interface ProbedService extends RunningService {
  sample(request?: Omit<ProbeRequest, 'id'>): Promise<ProbeSample>;
}

/** Runs the built service with the probe preloaded and an IPC channel to it. */
export async function startProbedService(databaseUrl: string, apiKey: string): Promise<ProbedService> {
  const service = await startService({
    databaseUrl,
    apiKey,
    env: { LOG_LEVEL: 'warn' },
    nodeArgs: ['--expose-gc', '--import', new URL('./soak-probe.js', import.meta.url).href],
    ipc: true,
  });
  const { child } = service;
  let nextId = 0;
  return {
    ...service,
    sample: (request = {}) =>
      new Promise((resolve, reject) => {
        const id = ++nextId;
        const timer = setTimeout(() => reject(new Error('the service did not answer the probe within 10 s')), 10_000);
        const onMessage = (message: ProbeSample) => {
          if (message.id !== id) return;
          clearTimeout(timer);
          child.off('message', onMessage);
          resolve(message);
        };
        child.on('message', onMessage);
        child.send({ ...request, id });
      }),
  };
}
