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
  // A fresh worker per test file: in a reused worker, the second file that boots the app fails inside
  // jest-runtime ("reading 'identifier'") when TypeORM dynamically imports the entities and migrations.
  workerIdleMemoryLimit: '1MB',
  collectCoverageFrom: ['src/**/*.ts'],
  coverageDirectory: './coverage',
};
