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
  // Two workers, but only the live alerts, which mostly wait, run beside another spec; the fleet, the failover and the
  // replicas, which put a service under steady load and measure its answers, run alone
  // (test/system/support/one-at-a-time.ts).
  maxWorkers: 2,
  globals: {
    systemSpecs: {
      alone: ['fleet.system-spec.ts', 'failover.system-spec.ts', 'replicas.system-spec.ts'],
      beside: ['alerts-live.system-spec.ts'],
    },
  },
  testSequencer: '<rootDir>/test/system/support/sequencer.js',
  setupFilesAfterEnv: ['<rootDir>/test/system/support/one-at-a-time.ts'],
};
