/**
 * The dashboard's backends view with a fleet (issue 43 item 4), in headless Chromium (the
 * system package, driven by playwright-core, as dashboard.test.ts): two real routers with
 * `fleet:` on a real etcd;
 *
 * - a drain made through r1's admin API with `scope=fleet` shows on r2's page as draining with
 *   the label "fleet · set by r1";
 * - the page's own controls with the scope select on "fleet" drain a backend for the fleet
 *   (r1 applies it, set by r2), and with "this router" only on r2 (label "local · set by r2");
 * - a fleet weight shows in the weight cell with its label;
 * - a router without `fleet:` shows no scope select (its GET /fleet answers 404).
 *
 * UI state is awaited with DOM waits (the page polls once a second); screenshots go to
 * test/output/ (ignored by git).
 */
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { hasChromium, launchChromium, type TestBrowser, WAIT } from '../harness/chromium.ts';
import { etcdBinary, startEtcd, type TestEtcd } from '../harness/etcd.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

const TOKEN = 'fleet-dash-s3cret';

/** One backend as `/backends` shows it (the fields these tests read). */
interface BackendView {
  id: string;
  mode: string;
  modeScope: string | null;
  overrides: { fleet: { state: string; setBy: string } | null };
}

/** A POST (or GET) to an admin port with the token; the parsed JSON answer. */
function admin(
  port: number,
  method: string,
  path: string,
  body?: string,
): Promise<{ status: number; json: { backends: BackendView[] } }> {
  return new Promise((resolve, reject) => {
    const headers = { host: `127.0.0.1:${port}`, authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
    const req = request({ port, host: '127.0.0.1', path, method, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const row = (id: string) => `tr[data-backend="${id}"]`;

describe.skipIf(!hasChromium || etcdBinary() === undefined)('dashboard: fleet backend state', () => {
  let etcd: TestEtcd;
  let a: TestBackend;
  let b: TestBackend;
  let c: TestBackend;
  let r1: TestRouter;
  let r2: TestRouter;
  let browser: TestBrowser;
  let page: Page;
  const prefix = `/swb-fleet-dash-${randomBytes(4).toString('hex')}/`;
  const port = (r: TestRouter) => r.router.admin!.address().port;
  const backendOn = async (r: TestRouter, id: string) =>
    (await admin(port(r), 'GET', '/backends')).json.backends.find((x) => x.id === id)!;
  const shot = (view: string) => browser.shot(`fleet-${view}`);

  beforeAll(async () => {
    etcd = await startEtcd();
    a = await startHttpBackend('a');
    b = await startHttpBackend('b');
    c = await startHttpBackend('c');
    const dir = await tempDir({
      'servers.yaml': `- { host: "*.example.test", backends: [${a.address}, ${b.address}, ${c.address}] }\n`,
    });
    const config = (id: string) => ({
      addressBook: { name: 'file', path: 'servers.yaml' },
      admin: { address: '127.0.0.1:0', token: TOKEN },
      fleet: { id, leaseTtl: '2s', etcd: { endpoints: [etcd.endpoint], prefix } },
    });
    r1 = await startTestRouter(config('r1'), { dir });
    r2 = await startTestRouter(config('r2'), { dir });
    browser = await launchChromium();
    page = browser.page;
    await page.goto(`http://127.0.0.1:${port(r2)}/ui`);
    await page.waitForSelector('#token-form:not([hidden])', WAIT);
    await page.fill('#token-input', TOKEN);
    await page.click('#token-form button[type="submit"]');
    for (const x of [a, b, c]) await page.waitForSelector(`${row(x.address)}[data-state="up"]`, WAIT);
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    for (const r of [r1, r2]) await r?.close();
    for (const x of [a, b, c]) await x?.close();
    await etcd?.close();
  });

  it('shows a fleet drain made through the other router as "fleet · set by r1"', async () => {
    const res = await admin(port(r1), 'POST', `/backends/${a.address}/drain?scope=fleet`);
    expect(res.status).toBe(200);
    await page.waitForSelector(`${row(a.address)}[data-state="draining"][data-mode-scope="fleet"]`, WAIT);
    await page.locator(`${row(a.address)} [data-field="override"]`, { hasText: /^fleet · set by r1$/ }).waitFor(WAIT);
    expect(await page.getAttribute(`${row(a.address)} [data-field="override"]`, 'title')).toMatch(/^set at \d{4}-/);
    await shot('drained-by-r1');
  }, 60_000);

  it('drains for the fleet with the scope select, and for this router only without it', async () => {
    await page.selectOption(`${row(b.address)} select.scope`, 'fleet');
    await page.click(`${row(b.address)} button[data-action="drain"]`);
    await page.locator(`${row(b.address)} [data-field="override"]`, { hasText: /^fleet · set by r2$/ }).waitFor(WAIT);
    await eventually(async () => (await backendOn(r1, b.address)).mode === 'draining', 5000, 'r1 to apply the drain');
    expect((await backendOn(r1, b.address)).overrides.fleet).toMatchObject({ state: 'drain', setBy: 'r2' });

    await page.click(`${row(c.address)} button[data-action="drain"]`);
    await page.locator(`${row(c.address)} [data-field="override"]`, { hasText: /^local · set by r2$/ }).waitFor(WAIT);
    expect(await backendOn(r1, c.address)).toMatchObject({ mode: 'up', modeScope: null });
    await shot('fleet-and-local');

    await page.selectOption(`${row(b.address)} select.scope`, 'fleet');
    await page.click(`${row(b.address)} button[data-action="enable"]`);
    await page.waitForSelector(`${row(b.address)}[data-state="up"][data-mode-scope=""]`, WAIT);
    await eventually(async () => (await backendOn(r1, b.address)).mode === 'up', 5000, 'r1 to apply the enable');
    await page.click(`${row(c.address)} button[data-action="enable"]`);
    await page.waitForSelector(`${row(c.address)}[data-state="up"][data-mode-scope=""]`, WAIT);
  }, 60_000);

  it('shows a fleet weight with its label in the weight cell', async () => {
    await admin(port(r1), 'POST', `/backends/${c.address}/weight?scope=fleet`, '{"weight": 4}');
    await page
      .locator(`${row(c.address)} [data-field="weight"]`, { hasText: /^4 \(fleet · set by r1\)$/ })
      .waitFor(WAIT);
    await shot('fleet-weight');
  }, 60_000);

  it('shows no scope select on a router without fleet:', async () => {
    const dir = await tempDir({ 'servers.yaml': `- { host: "*.example.test", backends: [${a.address}] }\n` });
    const plain = await startTestRouter(
      { addressBook: { name: 'file', path: 'servers.yaml' }, admin: { address: '127.0.0.1:0', token: TOKEN } },
      { dir },
    );
    try {
      const data = page.waitForResponse((r) => new URL(r.url()).pathname === '/ui/data' && r.status() === 200, WAIT);
      await page.goto(`http://127.0.0.1:${port(plain)}/ui`);
      await page.waitForSelector('#token-form:not([hidden])', WAIT);
      await page.fill('#token-input', TOKEN);
      await page.click('#token-form button[type="submit"]');
      // GET /ui/data says there is no fleet (the page then never asks GET /fleet).
      expect(((await (await data).json()) as { fleet: boolean }).fleet).toBe(false);
      // Two polls after the answer: the rows were updated knowing there is no fleet.
      for (let i = 0; i < 2; i++) await page.waitForResponse((r) => new URL(r.url()).pathname === '/ui/data', WAIT);
      await page.waitForSelector(`${row(a.address)}[data-state="up"]`, WAIT);
      expect(await page.isHidden(`${row(a.address)} select.scope`)).toBe(true);
      expect(await page.isVisible(`${row(a.address)} button[data-action="drain"]`)).toBe(true);
    } finally {
      await plain.close();
    }
  }, 60_000);
});
