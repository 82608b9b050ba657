/**
 * The dashboard's Fleet view (issue 43 item 1), in headless Chromium (the system package, driven
 * by playwright-core, as dashboard.test.ts) against real routers with `fleet:` on a real etcd:
 *
 * - one router: the Fleet tab shows, one member marked "this router", no "members differ" note;
 * - a second router joins: both listed with version, short config hash, listeners and "N s ago";
 *   their configs differ (the fleet id), so the note names two config hashes and not versions;
 * - at 400 px wide the page has no horizontal scroll on the Fleet view;
 * - etcd stopped: the "degraded: etcd unreachable" banner shows and the other member's "last
 *   seen" grows with the page's polling; etcd back: the banner goes;
 * - a router without `fleet:`: no Fleet tab, and `#fleet` shows the backends view.
 *
 * UI state is awaited with DOM waits (the page polls once a second); screenshots go to
 * test/output/ (ignored by git).
 */
import { randomBytes } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { hasChromium, launchChromium, type TestBrowser, WAIT } from '../harness/chromium.ts';
import { etcdBinary, startEtcd, type TestEtcd } from '../harness/etcd.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

const TOKEN = 'fleet-view-s3cret';

const member = (id: string) => `#fleet-body tr[data-member="${id}"]`;

describe.skipIf(!hasChromium || etcdBinary() === undefined)('dashboard: the Fleet view', () => {
  let etcd: TestEtcd;
  let backend: TestBackend;
  let r1: TestRouter | undefined;
  let r2: TestRouter;
  let browser: TestBrowser;
  let page: Page;
  const dirs: string[] = [];
  const prefix = `/swb-fleet-view-${randomBytes(4).toString('hex')}/`;
  const port = (r: TestRouter) => r.router.admin!.address().port;
  const shot = (view: string) => browser.shot(`fleet-${view}`);

  async function start(id: string, fleet = true): Promise<TestRouter> {
    const dir = await tempDir({ 'servers.yaml': `- { host: "*.example.test", backends: [${backend.address}] }\n` });
    dirs.push(dir);
    const config = {
      addressBook: { name: 'file', path: 'servers.yaml' },
      admin: { address: '127.0.0.1:0', token: TOKEN },
      ...(fleet ? { fleet: { id, leaseTtl: '2s', etcd: { endpoints: [etcd.endpoint], prefix } } } : {}),
    };
    return startTestRouter(config, { dir });
  }

  async function open(r: TestRouter, hash: string): Promise<void> {
    await page.goto(`http://127.0.0.1:${port(r)}/ui/#${hash}`);
    await page.waitForSelector('#token-form:not([hidden])', WAIT);
    await page.fill('#token-input', TOKEN);
    await page.click('#token-form button[type="submit"]');
  }

  /** The seconds of `id`'s "last seen" cell ("7 s ago" → 7). */
  const seenSeconds = async (id: string) =>
    Number(
      /^(\d+) s ago$/.exec((await page.textContent(`${member(id)} [data-field="seen"]`)) ?? '')?.[1] ?? Number.NaN,
    );

  beforeAll(async () => {
    etcd = await startEtcd();
    backend = await startHttpBackend('a');
    r2 = await start('r2');
    browser = await launchChromium();
    page = browser.page;
    await open(r2, 'fleet');
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    for (const r of [r1, r2]) await r?.close();
    await backend?.close();
    await etcd?.close();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('one router: the Fleet tab, this router marked, no note', async () => {
    await page.waitForSelector('#tab-fleet:not([hidden])', WAIT);
    await page.waitForSelector(`${member('r2')}[data-self="true"] [data-field="self"]`, WAIT);
    expect(await page.locator('#fleet-body tr[data-member]').count()).toBe(1);
    expect(await page.textContent(`${member('r2')} [data-field="self"]`)).toBe('this router');
    expect(await page.locator('[data-fleet-mixed]').count()).toBe(0);
    expect(await page.locator('[data-fleet-degraded]').count()).toBe(0);
  }, 60_000);

  it('a second router joins: both listed, r2 marked, the note names two config hashes', async () => {
    r1 = await start('r1');
    await page.waitForSelector(`${member('r1')}[data-self="false"]`, WAIT);
    await page.waitForSelector(`${member('r2')}[data-self="true"]`, WAIT);
    expect(await page.locator(`${member('r1')} [data-field="self"]`).count()).toBe(0);
    const cells = await page.$$eval(`${member('r1')} td`, (tds) => tds.map((td) => td.textContent));
    const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(cells[0]).toBe('r1');
    expect(cells[1]).toBe(version);
    expect(cells[2]).toMatch(/^[0-9a-f]{8}$/);
    expect(cells[3]).toBe(`127.0.0.1:${r1.port()}`);
    expect(cells[5]).toMatch(/^\d+ s ago$/);
    // Each config names its own fleet id, so the hashes differ; the versions do not.
    await page.waitForSelector('[data-fleet-mixed] [data-mixed="config"]', WAIT);
    expect(await page.textContent('[data-fleet-mixed] [data-mixed="config"]')).toMatch(
      /^config hashes: [0-9a-f]{8} \(r[12]\) · [0-9a-f]{8} \(r[12]\)$/,
    );
    expect(await page.locator('[data-fleet-mixed] [data-mixed="version"]').count()).toBe(0);
    await shot('members');
  }, 60_000);

  it('at 400 px wide: no horizontal scroll', async () => {
    await page.setViewportSize({ width: 400, height: 800 });
    try {
      await page.waitForSelector(member('r2'), WAIT);
      const [scroll, client] = (await page.evaluate(
        '[document.documentElement.scrollWidth, document.documentElement.clientWidth]',
      )) as [number, number];
      expect(client).toBe(400);
      expect(scroll).toBeLessThanOrEqual(client);
      // The narrow layout: a member's values stacked, one a line, not side by side.
      const [id, version] = await Promise.all(
        [1, 2].map((n) => page.locator(`${member('r2')} td:nth-child(${n})`).boundingBox()),
      );
      expect(version!.y).toBeGreaterThanOrEqual(id!.y + id!.height);
      await shot('narrow');
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  }, 60_000);

  it('etcd stopped: the degraded banner, and "last seen" grows with the polling; etcd back: gone', async () => {
    await etcd.stop();
    try {
      await page.locator('[data-fleet-degraded]', { hasText: /^degraded: etcd unreachable/ }).waitFor(WAIT);
      const before = await seenSeconds('r1');
      expect(Number.isFinite(before)).toBe(true);
      await eventually(async () => (await seenSeconds('r1')) >= before + 2, 30_000, 'last seen to grow');
      await shot('degraded');
    } finally {
      await etcd.restart();
    }
    await page.waitForSelector('[data-fleet-degraded]', { state: 'detached', ...WAIT });
    await page.waitForSelector(member('r1'), WAIT);
  }, 90_000);

  it('a router without fleet: has no Fleet tab, and #fleet shows the backends', async () => {
    const plain = await start('plain', false);
    try {
      // GET /ui/data says there is no fleet, so the page never asks GET /fleet (no 404 in the console).
      const fleetAsked: string[] = [];
      const onRequest = (r: { url(): string }) => {
        if (new URL(r.url()).pathname === '/fleet') fleetAsked.push(r.url());
      };
      page.on('request', onRequest);
      const data = page.waitForResponse((r) => new URL(r.url()).pathname === '/ui/data' && r.status() === 200, WAIT);
      await open(plain, 'fleet');
      expect(((await (await data).json()) as { fleet: boolean }).fleet).toBe(false);
      await page.waitForSelector('#view-backends:not([hidden])', WAIT);
      await page.waitForSelector(`tr[data-backend="${backend.address}"][data-state="up"]`, WAIT);
      expect(await page.isHidden('#tab-fleet')).toBe(true);
      expect(await page.isHidden('#view-fleet')).toBe(true);
      expect(await page.locator('#fleet-body tr[data-member]').count()).toBe(0);
      page.off('request', onRequest);
      expect(fleetAsked).toEqual([]);
    } finally {
      await plain.close();
    }
  }, 60_000);
});
