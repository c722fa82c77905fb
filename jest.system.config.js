import base from './jest.config.js';

/**
 * `npm run test:system`: the checks that need Debian packages besides Node
 * (docker-compose to validate the compose file, redis-server for the shared
 * rate-limit storage, the fleet's PostgreSQL, PgBouncer and HAProxy, the
 * failover's and the replicas' Patroni and etcd), with the same support as `npm test`.
 */
/** Measured at normal priority, one at a time (test/system/support/scheduling.ts). */
const MEASURED = ['failover.system-spec.ts', 'fleet.system-spec.ts', 'replicas.system-spec.ts'];

export default {
  ...base,
  roots: ['<rootDir>/test/system'],
  testRegex: '\\.system-spec\\.ts$',
  // Two workers. The exclusive specs run one at a time, under a lock: the measured ones (the fleet, the failover, the
  // replicas: a service under steady load, its answers measured) at normal priority, and the promtool checks
  // (CPU-bound within a time limit) at the low CPU priority every other spec runs at beside them
  // (test/system/support/scheduling.ts). `first` is the order the workers take specs in, the rest after: the exclusive
  // ones follow one another while the live alerts (which mostly wait) and then the rest run on the other worker. The
  // tracing spec, the longest of the rest, comes before the last exclusive one, so that the suite does not end with it
  // running alone.
  maxWorkers: 2,
  // A fresh worker per spec: the lock is given up when the worker that holds it ends.
  workerIdleMemoryLimit: '1MB',
  globals: {
    systemSpecs: {
      exclusive: [...MEASURED, 'alert-rules.system-spec.ts'],
      measured: MEASURED,
      first: [
        'failover.system-spec.ts',
        'alerts-live.system-spec.ts',
        'fleet.system-spec.ts',
        'replicas.system-spec.ts',
        'tracing.system-spec.ts',
        'alert-rules.system-spec.ts',
      ],
    },
  },
  testSequencer: '<rootDir>/test/system/support/sequencer.js',
  setupFilesAfterEnv: ['<rootDir>/test/system/support/scheduling.ts'],
};
