/**
 * The dashboard an on-call engineer trusts (issue 45 item 2), in headless Chromium against a real
 * router with real backends:
 *
 * - a missing token, then a wrong one, each give a visible message;
 * - the only backend of `static` disabled from its row: the row says "disabled (not checked)",
 *   shows Enable but not Drain or Disable, the cluster reads "0 of 1 available" and a red line
 *   says every request routed to it is answered 503 (which real traffic confirms);
 * - a backend's row shows what it served (2xx/3xx/4xx/5xx, bytes) and its last probe;
 * - `$canary` is shown expanded in the routing table, with the book's own version of the routes;
 *   the TLS listener lists its certificate;
 *   the chart states its smoothing window;
 * - at 400 px wide no view scrolls sideways (and the screenshot is 400 px wide);
 * - no request of the page answers 404 (favicon) and the console has no error.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { createPki, type Pki } from '../harness/certs.ts';
import {
  hasChromium,
  launchChromium,
  openView,
  SCREENSHOTS,
  type TestBrowser,
  unlock,
  WAIT,
} from '../harness/chromium.ts';
import { httpGet } from '../harness/http.ts';
import { startTestRouter, type TestRouter } from '../harness/router.ts';

const TOKEN = 'oncall-s3cret';
const row = (id: string) => `tr[data-backend="${id}"]`;

describe.skipIf(!hasChromium)('dashboard for on-call (headless Chromium)', () => {
  let a1: TestBackend;
  let a2: TestBackend;
  let s1: TestBackend;
  let pki: Pki;
  let router: TestRouter;
  let browser: TestBrowser;
  let page: Page;
  let base: string;
  /** Every answer of 400 or more the page received, and every console error. */
  const failed: string[] = [];

  const open = (view: string) => openView(page, view);

  beforeAll(async () => {
    a1 = await startHttpBackend('a1');
    a2 = await startHttpBackend('a2');
    s1 = await startHttpBackend('s1');
    pki = await createPki();
    const cert = await pki.leaf('www', { dns: ['www.example.test', 'shop.example.test'] });
    const health = { type: 'tcp', interval: '100ms', timeout: '500ms', failNum: 1, succNum: 1, active: true };
    router = await startTestRouter({
      routing: 'per-request',
      admin: { address: '127.0.0.1:0', token: TOKEN },
      listeners: [
        { name: 'web', address: '127.0.0.1:0' },
        { name: 'tls', address: '127.0.0.1:0', tls: 'terminate', certificates: [{ cert: cert.cert, key: cert.key }] },
      ],
      addressBook: {
        name: 'bfe',
        conditions: { canary: 'req_header_value_in("X-Canary", "1", false)' },
        products: {
          web: {
            hosts: ['www.example.test'],
            rules: [
              { cond: '$canary && req_path_prefix_in("/api", false)', cluster: 'web' },
              { cond: 'req_path_prefix_in("/static", false)', cluster: 'static' },
              { cond: 'default_t()', cluster: 'web' },
            ],
          },
        },
        clusters: {
          web: {
            healthCheck: health,
            subclusters: {
              dc1: { weight: 1, backends: [{ address: a1.address }] },
              dc2: { weight: 1, backends: [{ address: a2.address }] },
            },
          },
          static: { healthCheck: health, subclusters: { s: { weight: 1, backends: [{ address: s1.address }] } } },
        },
      },
    });
    base = `http://127.0.0.1:${router.router.admin!.address().port}`;
    browser = await launchChromium();
    page = browser.page;
    page.on('response', (r) => {
      // The token form's first poll is the one expected refusal (401 before the token is given).
      if (r.status() >= 400 && r.status() !== 401) failed.push(`${r.status()} ${r.url()}`);
    });
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().includes('401')) failed.push(`console: ${m.text()}`);
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await router?.close();
    await Promise.all([a1, a2, s1].map((b) => b?.close()));
    await pki?.close();
  });

  it('says when the token is missing and when it is wrong', async () => {
    await page.goto(`${base}/ui/`);
    await page.locator('#token-error', { hasText: 'needs a token' }).waitFor(WAIT);
    expect(await page.textContent('#status')).toBe('token needed');
    await page.fill('#token-input', 'not-the-token');
    await page.click('#token-form button[type="submit"]');
    await page.locator('#token-error', { hasText: /^The router refused this token/ }).waitFor(WAIT);
    expect(await page.isVisible('#token-form')).toBe(true);
    await browser.shot('token-refused');
    await unlock(page, base, TOKEN);
    await page.waitForSelector(`${row(s1.address)}[data-state="up"]`, WAIT);
  }, 60_000);

  it('disables the only backend of static: red line, 0 of 1, "disabled (not checked)", only Enable', async () => {
    const s = row(s1.address);
    await page.locator(`${s} [data-field="health"]`, { hasText: /last probe ok \d+[smhd]/ }).waitFor(WAIT);
    expect(await page.isVisible(`${s} button[data-action="drain"]`)).toBe(true);
    expect(await page.isVisible(`${s} button[data-action="enable"]`)).toBe(false);
    expect(await page.locator('#availability [data-no-backend]').count()).toBe(0);
    expect(await page.textContent('[data-cluster="static"] [data-count="cluster"]')).toBe('1 of 1 available');
    // The weight box says what it is.
    expect(await page.textContent(`${s} label.weight-box`)).toBe('weight ');

    await page.click(`${s} button[data-action="disable"]`);
    await page.waitForSelector(`${s}[data-state="disabled"]`, WAIT);
    await page.locator(`${s} [data-field="health"]`, { hasText: /^disabled \(not checked\)$/ }).waitFor(WAIT);
    await page.waitForSelector(`${s} button[data-action="enable"]:not([hidden])`, WAIT);
    expect(await page.isVisible(`${s} button[data-action="drain"]`)).toBe(false);
    expect(await page.isVisible(`${s} button[data-action="disable"]`)).toBe(false);
    const banner = page.locator('#availability [data-no-backend="static"]');
    await banner.waitFor(WAIT);
    expect(await banner.textContent()).toBe(
      'cluster static: no backend available (0 of 1): every request routed to it (products.web.rules[1]) is answered 503',
    );
    expect(await page.textContent('[data-cluster="static"] [data-count="cluster"]')).toBe('0 of 1 available');
    expect(await page.getAttribute('[data-cluster="static"] [data-count="cluster"]', 'class')).toContain('none-left');
    // What the red line says is what traffic gets.
    expect((await httpGet(router.port('web'), '/static/app.css')).status).toBe(503);
    // The web cluster is unaffected.
    expect(await page.textContent('[data-cluster="web"] [data-count="cluster"]')).toBe('2 of 2 available');
    await browser.shot('no-backend-left');
  }, 60_000);

  it('shows what a backend served, by status class, with bytes and time in state', async () => {
    for (let i = 0; i < 6; i++) expect((await httpGet(router.port('web'), `/page/${i}`)).status).toBe(200);
    // Six answers between the two web backends: the two rows' 2xx sum to 6.
    const twoxx = async () => {
      let sum = 0;
      for (const b of [a1, a2]) {
        const text = (await page.textContent(`${row(b.address)} [data-field="classes"]`)) ?? '';
        const [ok, ...rest] = text.split(' / ').map(Number);
        expect(rest).toEqual([0, 0, 0]);
        sum += ok ?? 0;
      }
      return sum;
    };
    await expect.poll(twoxx, { timeout: 30_000 }).toBe(6);
    const bytes = await page.textContent(`${row(a1.address)} [data-field="bytes"]`);
    expect(bytes).toMatch(/^\d+(\.\d)? k?B \/ \d+(\.\d)? k?B$/);
    expect(await page.textContent(`${row(a1.address)} [data-field="since"]`)).toMatch(/^(≥ )?\d+[smhd]/);
  }, 60_000);

  it('shows $canary expanded, the TLS listener with its certificate, the chart window', async () => {
    await open('routes');
    const expanded = await page.textContent('[data-product="web"] [data-expanded]');
    expect(expanded).toBe('= (req_header_value_in("X-Canary", "1", false)) && req_path_prefix_in("/api", false)');
    expect(await page.textContent('[data-conditions] tr[data-condition="canary"]')).toContain('$canary');
    // The book's own version of the routes (issue 45 item 6), in the view and in the header.
    await page
      .locator('#routes-book', { hasText: /^bfe routes from .+ · version sha256:[0-9a-f]{12} · / })
      .waitFor(WAIT);
    expect(await page.textContent('#version')).toMatch(/ · routes sha256:[0-9a-f]{12}$/);
    await open('traffic');
    const tls = page.locator('tr[data-listener="tls"] [data-certificate]');
    await tls.first().waitFor(WAIT);
    expect(await tls.first().textContent()).toMatch(
      /^www\.example\.test, shop\.example\.test · expires in \d+d \d+h \(\d{4}-\d\d-\d\d\) · file$/,
    );
    expect(await page.textContent('tr[data-listener="tls"]')).toContain('terminate');
    expect(await page.textContent('#chart-window')).toBe('(per second, 10 s average)');
  }, 60_000);

  it('works at 400 px: no view scrolls sideways; no 404 and no console error', async () => {
    await page.setViewportSize({ width: 400, height: 900 });
    for (const view of ['backends', 'traffic', 'routes', 'policies', 'explain', 'reloads']) {
      await open(view);
      const [scroll, client] = (await page.evaluate(
        '[document.documentElement.scrollWidth, document.documentElement.clientWidth]',
      )) as [number, number];
      expect(`${view}: ${scroll}`).toBe(`${view}: ${client}`);
    }
    await open('backends');
    await page.waitForSelector('#availability [data-no-backend="static"]', WAIT);
    await browser.shot('narrow');
    const png = await readFile(join(SCREENSHOTS, 'dashboard-narrow.png'));
    // PNG IHDR: the width is the big-endian word at byte 16.
    expect(png.readUInt32BE(16)).toBe(400);
    expect(failed).toEqual([]);
  }, 60_000);
});
