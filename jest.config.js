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
  // TypeORM loads entities and migrations with a dynamic import(); in a Jest
  // process that already ran one test file, that import resolves against the
  // torn-down module registry of the previous file ("reading 'identifier'").
  // A fresh worker per file avoids it; two workers also keep both cores busy.
  maxWorkers: 2,
  workerIdleMemoryLimit: '1KB',
  collectCoverageFrom: ['src/**/*.ts'],
  coverageDirectory: './coverage',
};
