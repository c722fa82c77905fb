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
};
