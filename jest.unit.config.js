import base from './jest.config.js';

/**
 * `npm run test:unit`: the specs beside the code (src/, dev/ and migrations/), which need no database server, so
 * that the loop while writing code takes seconds. `npm test` runs these and the end-to-end specs in test/.
 */
export default {
  ...base,
  roots: ['<rootDir>/src', '<rootDir>/dev', '<rootDir>/migrations'],
  testRegex: '\\.spec\\.ts$',
  globalSetup: undefined,
  globalTeardown: undefined,
};
