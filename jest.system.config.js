import base from './jest.config.js';

/**
 * `npm run test:system`: the checks that need Debian packages besides Node
 * (docker-compose to validate the compose file, redis-server for the shared
 * rate-limit storage, the fleet's PostgreSQL, PgBouncer and HAProxy, the
 * failover's and the replicas' Patroni and etcd), with the same support as `npm test`.
 */
export default {
  ...base,
  roots: ['<rootDir>/test/system'],
  testRegex: '\\.system-spec\\.ts$',
  // Two workers. The measured specs (the fleet, the failover, the replicas: a service under steady load, its answers
  // measured) run one at a time at normal priority; every other spec runs beside them at the lowest CPU priority
  // (test/system/support/scheduling.ts). `first` is the order the workers take specs in, the rest after: the measured
  // ones one after another on one worker while the live alerts (which mostly wait) and the promtool checks run on the
  // other.
  maxWorkers: 2,
  // A fresh worker per spec: the lock is given up when the worker that holds it ends.
  workerIdleMemoryLimit: '1MB',
  globals: {
    systemSpecs: {
      measured: ['failover.system-spec.ts', 'fleet.system-spec.ts', 'replicas.system-spec.ts'],
      first: [
        'failover.system-spec.ts',
        'alerts-live.system-spec.ts',
        'fleet.system-spec.ts',
        'alert-rules.system-spec.ts',
        'replicas.system-spec.ts',
      ],
    },
  },
  testSequencer: '<rootDir>/test/system/support/sequencer.js',
  setupFilesAfterEnv: ['<rootDir>/test/system/support/scheduling.ts'],
};
