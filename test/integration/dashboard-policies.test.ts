/**
 * The dashboard's policies (issue 42 item 5) in a real browser: headless Chromium (the system
 * package, driven by playwright-core) on `/ui` of a running router with `policies:`:
 *
 * - the Policies view lists the rules in order with their point, and the counts follow real
 *   traffic: a blocked request shows `answer 1`, three clients under a rate limit show 3 keys;
 * - the explain form names the rule that would fire for a request and a client address, as
 *   `switchboard route` does.
 *
 * UI state is awaited with DOM waits (the page polls once a second); no sleep decides anything.
 */
import { connect } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { hasChromium, launchChromium, openView, type TestBrowser, WAIT } from '../harness/chromium.ts';
import { startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

const TOKEN = 'dash-policies';

/** One GET from `from` on its own connection; resolves with the reply. */
function get(port: number, from: string, path: string): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1', localAddress: from });
    let data = '';
    s.on('data', (c: Buffer) => {
      data += c.toString('latin1');
    });
    s.on('error', () => {});
    s.once('close', () => resolve(data));
    s.write(`GET ${path} HTTP/1.1\r\nHost: shop.test\r\nConnection: close\r\n\r\n`);
  });
}

describe.skipIf(!hasChromium)('dashboard policies in headless Chromium', () => {
  let backend: TestBackend;
  let router: TestRouter;
  let browser: TestBrowser;
  let page: Page;

  const open = (view: string) => openView(page, view);

  beforeAll(async () => {
    backend = await startHttpBackend('a');
    const dir = await tempDir({ 'servers.yaml': `- { host: "*", backends: [${backend.address}] }\n` });
    router = await startTestRouter(
      {
        listeners: [{ name: 'web', address: '0.0.0.0:0' }],
        admin: { address: '127.0.0.1:0', token: TOKEN },
        addressBook: { name: 'file', path: 'servers.yaml' },
        policies: [
          {
            name: 'api-rate',
            use: 'rate-limit',
            when: 'req_path_prefix_in("/api", false)',
            options: { key: 'client-ip', rate: '100/s' },
          },
          {
            name: 'admin',
            use: 'block',
            when: 'req_path_prefix_in("/admin", false)',
            options: { cidrs: ['127.0.0.0/8'] },
            action: { respond: 403 },
          },
        ],
      },
      { dir },
    );
    browser = await launchChromium();
    page = browser.page;
    await page.goto(`http://127.0.0.1:${router.router.admin!.address().port}/ui/`);
    await page.waitForSelector('#token-form:not([hidden])', WAIT);
    await page.fill('#token-input', TOKEN);
    await page.click('#token-form button[type="submit"]');
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await router?.close();
    await backend?.close();
  });

  it('lists the rules in order with their counts, which follow real traffic', async () => {
    await open('policies');
    await page.waitForSelector('tr[data-policy="admin"]', WAIT);
    expect(
      await page.locator('tr[data-policy]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-policy'))),
    ).toEqual(['api-rate', 'admin']);
    expect(await page.textContent('tr[data-policy="api-rate"]')).toContain('request');
    for (const from of ['127.0.0.1', '127.0.0.2', '127.0.0.3'])
      expect(await get(router.port(), from, '/api/x')).toContain(' 200 ');
    expect(await get(router.port(), '127.0.0.1', '/admin')).toContain(' 403 ');
    await page.locator('tr[data-policy="admin"] td[data-actions]', { hasText: 'answer 1' }).waitFor(WAIT);
    await page.locator('tr[data-policy="api-rate"] td[data-keys]', { hasText: /^3$/ }).waitFor(WAIT);
    await browser.shot('policies');
  }, 60_000);

  it('the explain form names the rule that would fire for the request and client', async () => {
    await open('explain');
    await page.fill('#explain-form [name="host"]', 'shop.test');
    await page.fill('#explain-form [name="path"]', '/admin/x');
    await page.fill('#explain-form [name="client"]', '127.0.0.9');
    await page.evaluate(`document.getElementById('explain-output').dataset.state = ''`);
    await page.click('#explain-form button[type="submit"]');
    await page.waitForSelector('#explain-output[data-state="done"]', WAIT);
    expect(await page.textContent('#explain-output')).toContain('policy: admin (block) at request: fires, answer 403');
    await page.fill('#explain-form [name="client"]', '192.0.2.1');
    await page.evaluate(`document.getElementById('explain-output').dataset.state = ''`);
    await page.click('#explain-form button[type="submit"]');
    await page.waitForSelector('#explain-output[data-state="done"]', WAIT);
    expect(await page.textContent('#explain-output')).toContain('policy: admin (block) at request: passes');
  }, 60_000);
});
