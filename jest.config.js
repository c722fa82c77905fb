import vm from 'node:vm';

// CommonJS packages that require() ESM-only ones (@fastify/static, serving the Swagger UI assets: content-disposition;
// @apidevtools/swagger-parser: json-schema-ref-parser). Jest's module loader runs such a require() itself where
// Node's vm can evaluate a module graph synchronously (Node 24.9+, the check Jest makes); before that, those
// ESM-only packages are compiled to CommonJS. Compiled ones on Node 24 would be loaded as ES modules and fail.
const JEST_REQUIRES_ESM = typeof vm.SourceTextModule?.prototype.hasAsyncGraph === 'function';
const ESM_ONLY_REQUIRED_FROM_CJS = ['content-disposition', '@apidevtools/json-schema-ref-parser'];
// CommonJS packages that require() Nest's ESM-only packages: given the application's instances of those instead.
const CJS_REQUIRING_NEST = ['@nestjs/throttler'];
const compileToCommonJs = JEST_REQUIRES_ESM
  ? {}
  : {
      [`/node_modules/(${ESM_ONLY_REQUIRED_FROM_CJS.join('|')})/.+\\.js$`]: [
        'ts-jest',
        {
          useESM: false,
          tsconfig: { allowJs: true, module: 'commonjs', moduleResolution: 'node10', isolatedModules: true },
        },
      ],
    };
const TRANSFORMED_PACKAGES = JEST_REQUIRES_ESM
  ? CJS_REQUIRING_NEST
  : [...ESM_ONLY_REQUIRED_FROM_CJS, ...CJS_REQUIRING_NEST];

/** @type {import('jest').Config} */
export default {
  moduleFileExtensions: ['js', 'json', 'ts'],
  rootDir: '.',
  roots: ['<rootDir>/src', '<rootDir>/dev', '<rootDir>/migrations', '<rootDir>/test'],
  testRegex: '\\.(e2e-)?spec\\.ts$',
  extensionsToTreatAsEsm: ['.ts'],
  // Sources import './x.js' as Node's ESM resolution requires; jest resolves the .ts file.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true }],
    ...compileToCommonJs,
    [`/node_modules/(${CJS_REQUIRING_NEST.join('|')})/.+\\.js$`]:
      '<rootDir>/test/support/jest/require-esm.transformer.cjs',
  },
  transformIgnorePatterns: [`/node_modules/(?!(${TRANSFORMED_PACKAGES.join('|')})/)`],
  setupFiles: ['<rootDir>/test/support/jest/preload-esm.ts'],
  testEnvironment: 'node',
  globalSetup: '<rootDir>/test/support/jest/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 30_000,
  // Workers are reused across test files, which spares each file a worker's start-up. Each end-to-end file leaves
  // part of its module graph in Jest's ES module loader, so a worker whose heap is past this after a file is
  // replaced (docs/testing.md, "CI's time").
  workerIdleMemoryLimit: '1GB',
  // Two workers keep both cores busy (the default is one fewer than the cores).
  maxWorkers: 2,
  collectCoverageFrom: ['src/**/*.ts', 'migrations/**/*.ts'],
  coverageDirectory: './coverage',
};
