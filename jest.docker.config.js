import base from './jest.config.js';

/**
 * `npm run test:docker`: the image and the compose files on a real Docker engine (test/docker/). The global setup
 * builds test-only stand-ins for the base images and the service image; each spec runs its own compose project.
 */
export default {
  ...base,
  roots: ['<rootDir>/test/docker'],
  testRegex: '\\.docker-spec\\.ts$',
  globalSetup: '<rootDir>/test/docker/global-setup.ts',
  globalTeardown: undefined,
  testTimeout: 240_000,
  // Three workers on the 2 cores: the specs mostly wait on the engine (containers' health, restarts, dumps), so a third
  // fills time two leave idle (docs/testing.md, "The Docker suite").
  maxWorkers: 3,
};
