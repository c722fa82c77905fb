import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';

/** Debian's Chromium, which `.ci/run` installs: Playwright never downloads a browser of its own here. */
const CHROMIUM = '/usr/bin/chromium';

export interface Chromium {
  page: Page;
  close(): Promise<void>;
}

/**
 * Headless Chromium on a throw-away profile. Playwright's default switches turn its background connections off (the
 * machine's network is closed, and it would keep trying them).
 */
export async function launchChromium(): Promise<Chromium> {
  const profile = await mkdtemp(join(tmpdir(), 'animal-store-chromium-'));
  const removeProfile = () => rm(profile, { recursive: true, force: true });
  try {
    const browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--disable-gpu'],
    });
    const page = browser.pages()[0] ?? (await browser.newPage());
    page.setDefaultTimeout(30_000);
    return {
      page,
      close: async () => {
        await browser.close();
        await removeProfile();
      },
    };
  } catch (error) {
    await removeProfile();
    throw error;
  }
}
