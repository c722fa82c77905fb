import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { jsonBody, request, startTestApp, TestApp, TEST_KEY } from '../support/test-app.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url));
const UI_TIMEOUT = 30_000;

describe('Swagger UI at /docs in headless Chromium', () => {
  let t: TestApp;
  let profile: string;
  let browser: BrowserContext;
  let page: Page;
  const offOrigin: string[] = [];

  beforeAll(async () => {
    t = await startTestApp();
    profile = await mkdtemp(join(tmpdir(), 'animal-store-chromium-'));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
    page = browser.pages()[0] ?? (await browser.newPage());
    page.setDefaultTimeout(UI_TIMEOUT);
    // The UI must work offline: anything not asked of the service itself is recorded and refused.
    await page.route('**/*', (route) => {
      if (route.request().url().startsWith(t.origin)) return route.continue();
      offOrigin.push(route.request().url());
      return route.abort();
    });
  });

  afterAll(async () => {
    await browser?.close();
    await rm(profile, { recursive: true, force: true });
    await t?.close();
  });

  it('shows the three operations under animals, authorizes and runs listPets with a 200', async () => {
    const created = await request(t.origin, '/v1/pets', jsonBody({ name: 'Browser Rex', categoryId: 4 }));
    expect(created.status).toBe(201);

    await page.goto(`${t.origin}/docs`);
    const animals = page.locator('.opblock-tag-section').filter({ has: page.locator('[data-tag="animals"]') });
    await animals.locator('.opblock').first().waitFor();
    expect(
      await animals.locator('.opblock').evaluateAll((blocks: { id: string }[]) => blocks.map((block) => block.id)),
    ).toEqual(['operations-animals-listPets', 'operations-animals-createPet', 'operations-animals-getPet']);
    await expect(page.locator('#operations-animals-getPet').getAttribute('class')).resolves.toContain(
      'opblock-deprecated',
    );
    await expect(page.locator('#operations-animals-listPets').getAttribute('class')).resolves.not.toContain(
      'opblock-deprecated',
    );

    await page.locator('.auth-wrapper button.authorize').click();
    await page.locator('.modal-ux input').fill(TEST_KEY);
    await page.locator('.modal-ux button[type="submit"]').click();
    await page.locator('.modal-ux button.btn-done').click();

    await page.locator('.servers select').selectOption('/v1');

    const listPets = page.locator('#operations-animals-listPets');
    await listPets.locator('.opblock-summary').click();
    await listPets.locator('button.try-out__btn').click();
    await listPets.locator('button.execute').click();
    const status = listPets.locator('.live-responses-table .response .response-col_status');
    await status.waitFor();
    expect((await status.innerText()).trim()).toBe('200');
    await expect(
      listPets.locator('.live-responses-table .response .response-col_description').innerText(),
    ).resolves.toContain('Browser Rex');

    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'docs-ui.png'), fullPage: true });
    expect(offOrigin).toEqual([]);
  });
});
