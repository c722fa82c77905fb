import base from './jest.config.js';

// The unit specs that load @nestjs/throttler, whose require() of Nest's ES modules needs them preloaded
// (test/support/jest/preload-esm.ts); the other unit specs skip that start-up.
const LOADS_THROTTLER = [
  'src/auth/api-key.guard.spec.ts',
  'src/auth/rate-limit/auth-failure-limiter.spec.ts',
  'src/auth/rate-limit/rate-limit.module.spec.ts',
  'dev/build-openapi-document.spec.ts',
];
const {
  globalSetup,
  globalTeardown,
  maxWorkers,
  workerIdleMemoryLimit,
  collectCoverageFrom,
  coverageDirectory,
  ...project
} = base;
const unit = {
  ...project,
  roots: ['<rootDir>/src', '<rootDir>/dev', '<rootDir>/migrations'],
  testRegex: '\\.spec\\.ts$',
};
const throttlerSpecs = LOADS_THROTTLER.map((path) => `<rootDir>/${path}`);

/**
 * `npm run test:unit`: the specs beside the code (src/, dev/ and migrations/), which need no database server, so
 * that the loop while writing code takes seconds. `npm test` runs these and the end-to-end specs in test/.
 */
export default {
  maxWorkers,
  workerIdleMemoryLimit,
  collectCoverageFrom,
  coverageDirectory,
  projects: [
    { ...unit, displayName: 'unit', setupFiles: [], testPathIgnorePatterns: LOADS_THROTTLER },
    { ...unit, displayName: 'unit, Nest preloaded', testRegex: undefined, testMatch: throttlerSpecs },
  ],
};
