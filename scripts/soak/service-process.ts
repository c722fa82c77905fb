import { ChildProcess, fork } from 'node:child_process';
import type { ProbeRequest, ProbeSample } from './service-probe.js';

export interface ServiceProcess {
  pid: number;
  sample(request?: Omit<ProbeRequest, 'id'>): Promise<ProbeSample>;
  stop(): Promise<void>;
}

/** Runs the built service (dist/main.js) with the probe preloaded and an IPC channel to it. */
export function startServiceProcess(env: NodeJS.ProcessEnv): ServiceProcess {
  const main = new URL('../../../main.js', import.meta.url);
  const probe = new URL('./service-probe.js', import.meta.url);
  const child: ChildProcess = fork(main, [], {
    env,
    execArgv: ['--expose-gc', '--import', probe.href],
    // The service's logs (a line per deprecated call, per 503...) would turn the run into a terminal benchmark.
    stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
  });
  let nextId = 0;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  return {
    pid: child.pid!,
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
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(killer);
    },
  };
}
