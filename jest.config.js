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
  // A fresh worker per test file. TypeORM loads entities and migrations with
  // `Function('return p => import(p)')`, and Node hands that import() to the
  // Jest runtime of the first file that ran it, torn down by the second file
  // ("Cannot read properties of undefined (reading 'identifier')"). Any limit
  // also keeps Jest from running in band, which would share one process.
  workerIdleMemoryLimit: '1MB',
  // Two workers keep both cores busy (the default is one fewer than the cores).
  maxWorkers: 2,
  collectCoverageFrom: ['src/**/*.ts'],
  coverageDirectory: './coverage',
};
