import base from './jest.config.js';

/**
 * `npm run test:system`: the checks that need Debian packages besides Node
 * (docker-compose to validate the compose file, redis-server for the shared
 * rate-limit storage, the fleet's PostgreSQL, PgBouncer and HAProxy, the
 * failover's Patroni and etcd), with the same support as `npm test`.
 */
export default {
  ...base,
  roots: ['<rootDir>/test/system'],
  testRegex: '\\.system-spec\\.ts$',
  // One file at a time: the fleet and the failover each put a service under steady load and measure its answers;
  // two of them on two cores would measure each other.
  maxWorkers: 1,
};
