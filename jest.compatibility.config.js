import { existsSync } from 'node:fs';
import base from './jest.config.js';

/**
 * CI's pass on the older Node that `engines` supports (22): the specs whose outcome can depend on the Node version,
 * each for the reason given, on a Testcontainers PostgreSQL (.ci/run). Everything else runs in-process on what these
 * cover, and runs on Node 24 in `npm test`. Add a spec here when it is the first to use a Node API these do not.
 */
const NODE_DEPENDENT = {
  // The unit specs of the modules that call Node's own APIs: node:crypto (crypto.hash for key digests, HMACs for page
  // cursors, hashes for request fingerprints, the keys' random part)...
  crypto: [
    'src/auth/api-key-store.spec.ts',
    'src/auth/api-keys/api-key-format.spec.ts',
    'src/pets/page-cursor.codec.spec.ts',
    'src/pets/idempotency/idempotency.service.spec.ts',
  ],
  // ...`.env` through node:util parseEnv and process.loadEnvFile, files read through node:fs, and node:module's
  // createRequire, which finds the log's transport...
  config: [
    'src/config/app-config.spec.ts',
    'src/config/published-secrets.spec.ts',
    'src/observability/logging/logger-params.spec.ts',
  ],
  // ...node:net's address checks, node:http's headers and node:events around the pg pool...
  network: [
    'src/auth/rate-limit/client-address.spec.ts',
    'src/edge/request-id.spec.ts',
    'src/database/database.spec.ts',
  ],
  // ...and the commands' arguments through node:util parseArgs and their messages through util.inspect. The other
  // unit specs run code that calls no Node API directly; every module's syntax is loaded by the built service below.
  commands: ['src/cli/apikey-commands.spec.ts', 'src/cli/cli-database.spec.ts'],
  // The built service started as a Node process (every module of dist/ loaded: a regular expression only Node 22
  // rejected was caught that way), its signals, exit codes and `npm start`'s embedded PostgreSQL.
  built: ['test/production-service.e2e-spec.ts'],
  // Node's HTTP server: headersTimeout, requestTimeout, keep-alive and maxConnections on raw sockets.
  http: ['test/edge-hardening.e2e-spec.ts'],
  // perf_hooks' event-loop utilization and delay, which load shedding reads.
  eventLoop: ['test/load-shedding.e2e-spec.ts'],
  // child_process, signals and process.on('exit') around the embedded PostgreSQL, and `npm start` on it.
  processes: ['test/embedded-postgres-recovery.e2e-spec.ts'],
};

const missing = Object.values(NODE_DEPENDENT)
  .flat()
  .filter((file) => !file.includes('*') && !existsSync(file));
if (missing.length > 0)
  throw new Error(`jest.compatibility.config.js names specs that do not exist: ${missing.join(', ')}`);

export default {
  ...base,
  testRegex: undefined,
  testMatch: Object.values(NODE_DEPENDENT)
    .flat()
    .map((glob) => `<rootDir>/${glob}`),
};
