import { expect } from '@jest/globals';
import { type Page } from 'playwright-core';
import { ApiKeysRepository } from '../../src/auth/api-keys/api-keys.repository.js';
import { generateApiKey, publicPrefix } from '../../src/auth/api-keys/api-key-format.js';
import { keyDigest } from '../../src/auth/key-digest.js';
import { launchChromium, type Chromium } from '../support/chromium.js';
import { jsonBody, request, startTestApp, TestApp } from '../support/test-app.js';
import { listenLocally } from './local-server.js';

/** A storefront's page: an empty document, served on a port of its own; the test runs its script in it. */
const storefront = () =>
  listenLocally((_incoming, outgoing) => {
    outgoing.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Shop</title>');
  });

/** What the storefront's script saw: the status, the headers it could read, and the body; or what fetch threw. */
type Seen = { status: number; headers: Record<string, string | null>; body: unknown } | { thrown: string };

/**
 * The storefront's script, run in the page: lists with the read-only key and follows `Link` to the next page,
 * as docs/clients.md shows; every step is what the browser let the page read.
 */
async function listTwoPages(page: Page, api: string, key: string): Promise<Seen[]> {
  return page.evaluate(
    async ({ api, key }) => {
      const seen: Seen[] = [];
      let next: string | undefined = `${api}/v1/pets?limit=2`;
      for (let pageCount = 0; next && pageCount < 2; pageCount++) {
        try {
          const response: Response = await fetch(next, { headers: { Authorization: `Bearer ${key}` } });
          const link = response.headers.get('link');
          seen.push({
            status: response.status,
            headers: { link, 'x-ratelimit-remaining': response.headers.get('x-ratelimit-remaining') },
            body: await response.json(),
          });
          const target = link?.match(/<([^>]+)>;\s*rel="next"/)?.[1];
          next = target ? new URL(target, next).href : undefined;
        } catch (error) {
          seen.push({ thrown: `${(error as Error).name}: ${(error as Error).message}` });
          next = undefined;
        }
      }
      return seen;
    },
    { api, key },
  );
}

describe('a storefront page on another origin, in headless Chromium', () => {
  let shop: Awaited<ReturnType<typeof storefront>>;
  let allowed: string;
  let notAllowed: string;
  let withCors: TestApp;
  let withoutCors: TestApp;
  let readOnlyKey: string;
  let browser: Chromium;
  let page: Page;

  beforeAll(async () => {
    shop = await storefront();
    allowed = shop.origin;
    notAllowed = shop.origin.replace('127.0.0.1', 'localhost');
    readOnlyKey = generateApiKey();
    withCors = await startTestApp({ corsOrigins: [allowed], rateLimitPerMinute: 100 });
    withoutCors = await startTestApp({ rateLimitPerMinute: 100 });
    for (const t of [withCors, withoutCors]) {
      // A pets:read key, stored as the key CLI stores it.
      await t.app.get(ApiKeysRepository).insert({
        name: 'storefront',
        prefix: publicPrefix(readOnlyKey),
        digest: keyDigest(readOnlyKey),
        scopes: ['pets:read'],
        expiresInMs: null,
      });
      for (const name of ['Rex', 'Tom', 'Kiki']) {
        expect((await request(t.origin, '/v1/pets', jsonBody({ name, categoryId: 1 }))).status).toBe(201);
      }
    }
    browser = await launchChromium();
    ({ page } = browser);
  });

  afterAll(async () => {
    await browser?.close();
    await withCors?.close();
    await withoutCors?.close();
    await shop?.close();
  });

  it('lists with a pets:read key, follows Link to the second page and reads X-RateLimit-Remaining', async () => {
    await page.goto(`${allowed}/`);
    const seen = await listTwoPages(page, withCors.origin, readOnlyKey);

    expect(seen).toEqual([
      {
        status: 200,
        headers: {
          link: expect.stringMatching(/^<\/v1\/pets\?limit=2&cursor=[^>]+>; rel="next"$/),
          'x-ratelimit-remaining': '99',
        },
        body: [expect.objectContaining({ name: 'Rex' }), expect.objectContaining({ name: 'Tom' })],
      },
      {
        status: 200,
        headers: { link: null, 'x-ratelimit-remaining': '98' },
        body: [expect.objectContaining({ name: 'Kiki' })],
      },
    ]);
  });

  // The CORS headers on refusals: test/cors.e2e-spec.ts; a pets:read key refused a create: test/key-lifecycle.e2e-spec.ts.
  it.each([
    ['on a page from an origin not in CORS_ORIGINS', () => notAllowed, () => withCors],
    ['on the allowed page when CORS_ORIGINS is unset', () => allowed, () => withoutCors],
  ])('gets a TypeError from fetch and no data %s', async (_case, pageOrigin, api) => {
    await page.goto(`${pageOrigin()}/`);
    expect(await listTwoPages(page, api().origin, readOnlyKey)).toEqual([{ thrown: 'TypeError: Failed to fetch' }]);
  });
});
