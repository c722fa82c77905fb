import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';

/** Debian's Chromium, which `.ci/run` installs: Playwright never downloads a browser of its own here. */
const CHROMIUM = '/usr/bin/chromium';
/** How long a page action may wait before its test fails. */
const UI_TIMEOUT = 30_000;

export interface Chromium {
  page: Page;
  close(): Promise<void>;
}

/**
 * Headless Chromium on a throw-away profile, with its background connections off (the machine's network is closed,
 * and it would keep trying them).
 */
export async function launchChromium(): Promise<Chromium> {
  const profile = await mkdtemp(join(tmpdir(), 'animal-store-chromium-'));
  const removeProfile = () => rm(profile, { recursive: true, force: true });
  try {
    const browser = await chromium.launchPersistentContext(profile, {
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
    const page = browser.pages()[0] ?? (await browser.newPage());
    page.setDefaultTimeout(UI_TIMEOUT);
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
