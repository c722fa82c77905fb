import base from './jest.config.js';

/** `npm run test:browser`: the Swagger UI in headless Chromium, with the same database and app support as `npm test`. */
export default {
  ...base,
  roots: ['<rootDir>/test/browser'],
  testRegex: '\\.browser-spec\\.ts$',
  testTimeout: 120_000,
};
