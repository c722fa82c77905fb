import { mkdir } from 'node:fs/promises';
import { request as forward } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Page } from 'playwright-core';
import { launchChromium, type Chromium } from '../support/chromium.js';
import { jsonBody, request, TEST_KEY } from '../support/test-app.js';
import { testAppPerBlock } from '../support/test-app-per-block.js';
import { listenLocally } from './local-server.js';

const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url));
const PREFIX = '/api';

/**
 * An ingress that mounts the service under /api: it strips the prefix, says so in X-Forwarded-Prefix, and
 * answers 404 for anything outside it.
 */
const prefixingProxy = (target: string) =>
  listenLocally((incoming, outgoing) => {
    if (!incoming.url?.startsWith(`${PREFIX}/`)) {
      outgoing.writeHead(404).end();
      return;
    }
    const upstream = forward(
      `${target}${incoming.url.slice(PREFIX.length)}`,
      { method: incoming.method, headers: { ...incoming.headers, 'x-forwarded-prefix': PREFIX } },
      (answer) => {
        outgoing.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(outgoing);
      },
    );
    upstream.once('error', () => outgoing.writeHead(502).end());
    incoming.pipe(upstream);
  });

describe('Swagger UI at /docs in headless Chromium', () => {
  const t = testAppPerBlock();
  let proxy: Awaited<ReturnType<typeof prefixingProxy>>;
  let browser: Chromium;
  let page: Page;
  const offOrigin: string[] = [];
  /** Every request the page sent, by URL. */
  const sent: string[] = [];

  beforeAll(async () => {
    proxy = await prefixingProxy(t.origin);
    const created = await request(t.origin, '/v1/pets', jsonBody({ name: 'Browser Rex', categoryId: 4 }));
    expect(created.status).toBe(201);
    browser = await launchChromium();
    ({ page } = browser);
    page.on('request', (sentRequest) => sent.push(sentRequest.url()));
    // The UI must work offline: anything not asked of the service (directly or through the proxy) is recorded
    // and refused.
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(`${t.origin}/`) || url.startsWith(`${proxy.origin}/`)) return route.continue();
      offOrigin.push(url);
      return route.abort();
    });
  });

  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
  });

  async function authorize(): Promise<void> {
    await page.locator('.auth-wrapper button.authorize').click();
    await page.locator('.modal-ux input').fill(TEST_KEY);
    await page.locator('.modal-ux button[type="submit"]').click();
    await page.locator('.modal-ux button.btn-done').click();
  }

  /** Try it out, then Execute, on an operation, with whatever the UI filled in: 200 with the animal, asked of `url`. */
  async function tryOut(operationId: string, url: string): Promise<void> {
    const operation = page.locator(`#operations-animals-${operationId}`);
    // Deep links reopen the operation last opened, after a reload too.
    if (!(await operation.getAttribute('class'))?.includes('is-open'))
      await operation.locator('.opblock-summary').click();
    sent.length = 0;
    await operation.locator('button.try-out__btn').click();
    await operation.locator('button.execute').click();
    const response = operation.locator('.live-responses-table .response');
    await response.locator('.response-col_status').waitFor();
    expect((await response.locator('.response-col_status').innerText()).trim()).toBe('200');
    expect(await response.locator('.response-col_description').innerText()).toContain('Browser Rex');
    expect(sent).toContain(url);
  }

  const servers = () =>
    page.locator('.servers select option').evaluateAll((options: { value: string }[]) => options.map((o) => o.value));

  // The operations it shows come from the document: test/docs.e2e-spec.ts serves it as committed in openapi.json.
  it('tries the serving instance first, with no server picked, and keeps production and staging listed', async () => {
    await page.goto(`${t.origin}/docs`);
    await authorize();
    expect(await servers()).toEqual(['v1', 'https://api.example.com/v1', 'https://staging-api.example.com/v1']);
    expect(await page.locator('.servers select').inputValue()).toBe('v1');

    await tryOut('listPets', `${t.origin}/v1/pets?limit=20`);
    // petId starts with its example, the id of the first animal stored.
    await tryOut('getPet', `${t.origin}/v1/pets/1`);

    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'docs-ui.png'), fullPage: true });
  });

  it('keeps the key after a reload', async () => {
    await page.reload();
    await page.locator('.auth-wrapper button.authorize.locked').waitFor();
    await tryOut('listPets', `${t.origin}/v1/pets?limit=20`);
  });

  it('works mounted under a path prefix by a proxy: the UI loads and Try it out stays under the prefix', async () => {
    // With a trailing slash, as people also type it: one address for the page, still under the prefix.
    await page.goto(`${proxy.origin}${PREFIX}/docs/`);
    expect(page.url()).toBe(`${proxy.origin}${PREFIX}/docs`);
    await authorize();
    await tryOut('listPets', `${proxy.origin}${PREFIX}/v1/pets?limit=20`);
    expect(sent.filter((url) => url.startsWith(proxy.origin) && !url.startsWith(`${proxy.origin}${PREFIX}/`))).toEqual(
      [],
    );
  });

  it('asked nothing of any other origin', () => {
    expect(offOrigin).toEqual([]);
  });
});
