/**
 * Headless Chromium for the dashboard tests: the system package (`/usr/bin/chromium`) driven by
 * playwright-core, in a throw-away profile. One launch per test file; a suite is skipped where
 * the binary is missing (`hasChromium`).
 *
 * Waits are selectors and locators, never `waitForFunction`: the page's CSP forbids the eval it
 * polls with. `unlock` loads `/ui/` and enters the token the way a user does.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

/** The system Chromium the tests drive. */
export const CHROMIUM = '/usr/bin/chromium';

/** True where the binary exists (`describe.skipIf(!hasChromium)`). */
export const hasChromium = existsSync(CHROMIUM);

/** Where screenshots go (ignored by git). */
export const SCREENSHOTS = fileURLToPath(new URL('../output/', import.meta.url));

/** DOM waits: generous, the page polls once a second on a shared machine. */
export const WAIT = { timeout: 30_000 } as const;

/** A running browser: its context, its first page, and `close` (removes the profile). */
export interface TestBrowser {
  readonly context: BrowserContext;
  readonly page: Page;
  /** A full-page screenshot to test/output/dashboard-`name`.png. */
  shot(name: string): Promise<void>;
  close(): Promise<void>;
}

/** Launches headless Chromium with a fresh profile and a `width` × `height` viewport. */
export async function launchChromium(viewport = { width: 1280, height: 900 }): Promise<TestBrowser> {
  const profile = await mkdtemp(join(tmpdir(), 'swb-chromium-'));
  await mkdir(SCREENSHOTS, { recursive: true });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    shot: async (name) => {
      await page.screenshot({ path: join(SCREENSHOTS, `dashboard-${name}.png`), fullPage: true });
    },
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** Clicks the tab of `view` and waits until its section shows. */
export async function openView(page: Page, view: string): Promise<void> {
  await page.click(`#tabs a[data-view="${view}"]`);
  await page.waitForSelector(`#view-${view}:not([hidden])`, WAIT);
}

/** Opens the dashboard at `base` (`http://127.0.0.1:port`) and enters `token` in its form. */
export async function unlock(page: Page, base: string, token: string): Promise<void> {
  await page.goto(`${base}/ui/`);
  await page.waitForSelector('#token-form:not([hidden])', WAIT);
  await page.fill('#token-input', token);
  await page.click('#token-form button[type="submit"]');
}
