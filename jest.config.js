/** @type {import('jest').Config} */
export default {
  moduleFileExtensions: ['js', 'json', 'ts'],
  rootDir: '.',
  roots: ['<rootDir>/src', '<rootDir>/test'],
  testRegex: '\\.(e2e-)?spec\\.ts$',
  extensionsToTreatAsEsm: ['.ts'],
  // Sources import './x.js' as Node's ESM resolution requires; jest resolves the .ts file.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true }],
  },
  testEnvironment: 'node',
  globalSetup: '<rootDir>/test/support/database-server.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 30_000,
  // A fresh worker for every test file: TypeORM loads migrations with a dynamic import() built by
  // `Function`, which under Node 20's vm modules stays bound to the first test file's (torn-down)
  // environment, so a second file booting the app in the same worker fails to import them.
  workerIdleMemoryLimit: '1KB',
  collectCoverageFrom: ['src/**/*.ts'],
  coverageDirectory: './coverage',
};
