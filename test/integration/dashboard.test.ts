/**
 * The dashboard (issue 20) in a real browser: headless Chromium (the system package, driven by
 * playwright-core) loads `/ui` from a running router with real backends and a token, and
 *
 * - asks for the token and keeps it in memory only (a page reload asks again);
 * - shows a backend go down when it is killed and come back when it is restarted (active
 *   health checks), grouped by cluster and sub-cluster;
 * - drains a backend with its control, after which no new request reaches it;
 * - answers the explain form exactly like `switchboard route` (the real CLI, same config);
 * - shows traffic, the routing table (searchable) and a failed reload with its error;
 *
 * and writes a screenshot of each view under test/output/ (ignored by git). UI state is always
 * awaited with DOM waits (the page polls once a second); no sleep decides anything. (Waits are
 * selectors and locators, not `waitForFunction`: the page's CSP forbids the eval it polls with.)
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { hasChromium, launchChromium, openView, type TestBrowser, WAIT } from '../harness/chromium.ts';
import { httpGet } from '../harness/http.ts';
import { startTestRouter, type TestRouter } from '../harness/router.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TOKEN = 'dash-s3cret';

/** `switchboard route` through the real CLI (with `--admin`: the running router's answer): its stdout and exit code. */
function routeCli(config: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/switchboard.js', 'route', '--config', config, ...args],
      { cwd: ROOT },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const row = (id: string) => `tr[data-backend="${id}"]`;

describe.skipIf(!hasChromium)('dashboard in headless Chromium', () => {
  let a1: TestBackend;
  let a2: TestBackend;
  let b1: TestBackend;
  let b2: TestBackend;
  let router: TestRouter;
  let browser: TestBrowser;
  let page: Page;
  let base: string;

  const shot = (view: string) => browser.shot(view);
  const open = (view: string) => openView(page, view);

  beforeAll(async () => {
    a1 = await startHttpBackend('a1');
    a2 = await startHttpBackend('a2');
    b1 = await startHttpBackend('b1');
    b2 = await startHttpBackend('b2');
    const health = { type: 'tcp', interval: '100ms', timeout: '500ms', failNum: 1, succNum: 1, active: true };
    router = await startTestRouter({
      admin: { address: '127.0.0.1:0', token: TOKEN },
      addressBook: {
        name: 'bfe',
        products: {
          web: {
            hosts: ['www.example.test', 'shop.example.test'],
            rules: [
              { cond: 'req_path_prefix_in("/api", false)', cluster: 'api' },
              { cond: 'default_t()', cluster: 'web' },
            ],
          },
        },
        clusters: {
          web: {
            healthCheck: health,
            subclusters: { dc1: { weight: 1, backends: [{ address: a1.address }, { address: a2.address }] } },
          },
          api: {
            healthCheck: health,
            // A backend that comes back ramps up over ten minutes: the page shows the ramp.
            slowStart: '10m',
            subclusters: {
              s1: { weight: 1, backends: [{ address: b1.address }] },
              s2: { weight: 1, backends: [{ address: b2.address }] },
            },
          },
        },
      },
    });
    base = `http://127.0.0.1:${router.router.admin!.address().port}`;
    browser = await launchChromium();
    page = browser.page;
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await router?.close();
    await Promise.all([a1, a2, b1, b2].map((b) => b?.close()));
  });

  it('asks for the token, keeps it in memory only, and shows every backend by cluster and sub-cluster', async () => {
    await page.goto(`${base}/ui`);
    expect(new URL(page.url()).pathname).toBe('/ui/');
    await page.waitForSelector('#token-form:not([hidden])', WAIT);
    await shot('token');
    await page.fill('#token-input', TOKEN);
    await page.click('#token-form button[type="submit"]');
    for (const b of [a1, a2, b1, b2]) await page.waitForSelector(`${row(b.address)}[data-state="up"]`, WAIT);
    expect(await page.locator('[data-cluster="web"] [data-subcluster="dc1"] tr[data-backend]').count()).toBe(2);
    expect(await page.locator('[data-cluster="api"] [data-subcluster="s2"] tr[data-backend]').count()).toBe(1);
    expect(await page.evaluate('localStorage.length + sessionStorage.length + document.cookie.length')).toBe(0);
    await shot('backends');
    // A reload of the page forgets the token.
    await page.reload();
    await page.waitForSelector('#token-form:not([hidden])', WAIT);
    await page.fill('#token-input', TOKEN);
    await page.click('#token-form button[type="submit"]');
    await page.waitForSelector(`${row(a1.address)}[data-state="up"]`, WAIT);
  }, 90_000);

  it('shows a killed backend down and the restarted one up again (slow start where configured)', async () => {
    const port = a1.port;
    await a1.close();
    await page.waitForSelector(`${row(a1.address)}[data-state="down"]`, WAIT);
    await shot('backend-down');
    a1 = await startHttpBackend('a1', undefined, port);
    await page.waitForSelector(`${row(a1.address)}[data-state="up"]`, WAIT);
    // In cluster api (slowStart 10m) the restarted backend is up and ramping.
    const bPort = b1.port;
    await b1.close();
    await page.waitForSelector(`${row(b1.address)}[data-state="down"]`, WAIT);
    b1 = await startHttpBackend('b1', undefined, bPort);
    await page.locator(`${row(b1.address)} [data-field="state"]`, { hasText: /^up · slow start \d+%$/ }).waitFor(WAIT);
    await shot('backend-slow-start');
  }, 90_000);

  it('drains a backend with its control: no new request reaches it; enable brings it back', async () => {
    const before = { a1: a1.hits, a2: a2.hits };
    for (let i = 0; i < 4; i++) expect((await httpGet(router.port(), '/')).status).toBe(200);
    expect(a1.hits - before.a1).toBeGreaterThan(0);
    expect(a2.hits - before.a2).toBeGreaterThan(0);

    await page.click(`${row(a2.address)} button[data-action="drain"]`);
    await page.waitForSelector(`${row(a2.address)}[data-state="draining"]`, WAIT);
    await shot('backend-drained');
    const drained = a2.hits;
    const a1Before = a1.hits;
    for (let i = 0; i < 6; i++) expect((await httpGet(router.port(), '/')).status).toBe(200);
    expect(a2.hits).toBe(drained);
    expect(a1.hits - a1Before).toBe(6);

    await page.fill(`${row(b2.address)} input.weight`, '3');
    await page.click(`${row(b2.address)} button[data-action="weight"]`);
    await page.locator(`${row(b2.address)} [data-field="weight"]`, { hasText: /^3 \(set\)$/ }).waitFor(WAIT);

    await page.click(`${row(a2.address)} button[data-action="enable"]`);
    await page.waitForSelector(`${row(a2.address)}[data-state="up"]`, WAIT);
    const enabled = a2.hits;
    for (let i = 0; i < 4; i++) expect((await httpGet(router.port(), '/')).status).toBe(200);
    expect(a2.hits).toBeGreaterThan(enabled);
  }, 90_000);

  it('shows traffic per listener, per product/cluster and by result code', async () => {
    expect((await httpGet(router.port(), '/', { host: 'unknown.test' })).status).toBe(404);
    await open('traffic');
    await page.waitForSelector('tr[data-listener="web"]', WAIT);
    await page.waitForSelector('tr[data-result="no_route"]', WAIT);
    await page.waitForSelector('tr[data-result="ok"]', WAIT);
    await page.waitForSelector('#traffic-chart polyline', WAIT);
    await shot('traffic');
  }, 60_000);

  it('shows the routing table with config paths, searchable', async () => {
    await open('routes');
    await page.waitForSelector('[data-product="web"]', WAIT);
    expect(await page.textContent('[data-product="web"]')).toContain('products.web.rules[0]');
    await page.fill('#routes-search', 'api');
    await page.locator('[data-route-cluster="web"]').waitFor({ state: 'detached', ...WAIT });
    expect(await page.locator('[data-route-cluster="api"]').count()).toBe(1);
    await shot('routes');
    await page.fill('#routes-search', '');
    await page.waitForSelector('[data-route-cluster="web"]', WAIT);
  }, 60_000);

  it.each([
    ['routed', { host: 'shop.example.test', path: '/api/orders', headers: 'X-Canary: 1' }, 0],
    ['no route', { host: 'unknown.test', path: '/', headers: '' }, 1],
  ])(
    'answers the explain form exactly like `switchboard route` (%s)',
    async (_name, q, exitCode) => {
      await open('explain');
      await page.fill('#explain-form [name="host"]', q.host);
      await page.fill('#explain-form [name="path"]', q.path);
      await page.fill('#explain-form [name="headers"]', q.headers);
      await page.evaluate(`document.getElementById('explain-output').dataset.state = ''`);
      await page.click('#explain-form button[type="submit"]');
      await page.waitForSelector('#explain-output[data-state="done"]', WAIT);
      const shown = await page.textContent('#explain-output');
      const args = ['--host', q.host, '--path', q.path, ...(q.headers ? ['--header', q.headers] : [])];
      // The form asks the running router (live state), as `route --admin` does.
      const cli = await routeCli(join(router.dir, 'switchboard.yaml'), [...args, '--admin', base, '--token', TOKEN]);
      expect(cli.stderr).toBe('');
      // A ramping backend's slow-start share grows between the two asks.
      const ramp = (t: string | null) => t?.replace(/slow start: [\d.]+%/g, 'slow start: N%');
      expect({ code: cli.code, text: ramp(cli.stdout) }).toEqual({ code: exitCode, text: ramp(shown) });
      expect(await page.getAttribute('#explain-output', 'data-exit-code')).toBe(String(exitCode));
      if (exitCode === 0) {
        expect(shown).toContain('chosen: ');
        await shot('explain');
      }
    },
    60_000,
  );

  it('the explanation itself skips a backend disabled now, saying why', async () => {
    await open('backends');
    await page.click(`${row(b2.address)} button[data-action="disable"]`);
    await page.waitForSelector(`${row(b2.address)}[data-state="disabled"]`, WAIT);
    await open('explain');
    await page.fill('#explain-form [name="host"]', 'shop.example.test');
    await page.fill('#explain-form [name="path"]', '/api/orders');
    await page.evaluate(`document.getElementById('explain-output').dataset.state = ''`);
    await page.click('#explain-form button[type="submit"]');
    await page.waitForSelector('#explain-output[data-state="done"]', WAIT);
    expect(await page.textContent('#explain-output')).toMatch(new RegExp(`${b2.address}.*: skipped: disabled`));
    expect(await page.textContent('#explain-command')).toContain(`--admin ${base}`);
    await open('backends');
    await page.click(`${row(b2.address)} button[data-action="enable"]`);
    await page.waitForSelector(`${row(b2.address)}[data-state="up"]`, WAIT);
  }, 60_000);

  it('shows the config version and a failed reload with its error', async () => {
    await open('reloads');
    const file = join(router.dir, 'switchboard.yaml');
    const good = await readFile(file, 'utf8');
    await writeFile(file, `${good}bogus: 1\n`);
    expect((await router.router.reload()).ok).toBe(false);
    await page.waitForSelector('tr[data-reload="failed"]', WAIT);
    expect(await page.textContent('tr[data-reload="failed"]')).toContain('bogus');
    expect(await page.textContent('#config-version')).toBe(router.router.runtime.engine.version);
    await shot('reloads');
    await writeFile(file, good);
  }, 60_000);
});
