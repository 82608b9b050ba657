/**
 * Health checks and the admin modes (HAProxy's `disable server` / `enable server`): a backend
 * disabled through the admin API is not probed at all (a real backend counts the probes it
 * receives), and reports no health verdict (`healthy: false` in /backends, 0 in
 * switchboard_backend_up); enabled again, its checks restart from DOWN, so it takes no traffic
 * on the verdict it had before the disable, only after `succNum` successful probes. A drained
 * backend keeps being checked. Real router (net and worker panels), real backends, real admin calls.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { type HttpAnswer, httpGet } from '../harness/http.ts';
import { eventually, startTestRouter, type TestRouter } from '../harness/router.ts';

const TOKEN = 't0ken';

/** An HTTP backend that counts health probes (`/health`) apart from traffic and can fail them. */
interface ProbedBackend {
  readonly address: string;
  probes: number;
  hits: number;
  /** What `/health` answers: 200 while true, 503 while false. */
  healthy: boolean;
  close(): Promise<void>;
}

async function startProbedBackend(name: string): Promise<ProbedBackend> {
  const sockets = new Set<Socket>();
  const b = { probes: 0, hits: 0, healthy: true } as ProbedBackend & { server: Server };
  const server = createServer((req, res) => {
    if (req.url === '/health') {
      b.probes++;
      res.writeHead(b.healthy ? 200 : 503, { 'content-length': '0' }).end();
      return;
    }
    b.hits++;
    res.writeHead(200, { 'x-backend': name, 'content-length': String(name.length) }).end(name);
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(b, {
    address: `127.0.0.1:${port}`,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((r) => server.close(() => r()));
    },
  });
}

function call(port: number, method: string, path: string): Promise<HttpAnswer> {
  return httpGet(port, path, {
    host: `127.0.0.1:${port}`,
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const PANELS: [string, unknown][] = [
  ['net', 'net'],
  ['worker (2 threads)', { name: 'worker', threads: 2 }],
];

for (const [label, panel] of PANELS)
  describe(`${label}: health checks under the admin modes`, () => {
    let a: ProbedBackend;
    let b: ProbedBackend;
    let router: TestRouter;
    let admin: number;

    beforeAll(async () => {
      a = await startProbedBackend('a');
      b = await startProbedBackend('b');
      router = await startTestRouter({
        panel,
        operator: 'round-robin',
        admin: { address: '127.0.0.1:0', token: TOKEN },
        addressBook: {
          name: 'bfe',
          products: { p: { hosts: ['m.test'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
          clusters: {
            c: {
              retries: 0,
              healthCheck: {
                type: 'http',
                path: '/health',
                interval: '40ms',
                timeout: '500ms',
                failNum: 1,
                succNum: 2,
                active: true,
              },
              subclusters: { s: { weight: 1, backends: [{ address: a.address }, { address: b.address }] } },
            },
          },
        },
      });
      admin = router.router.admin!.address().port;
    });
    afterAll(async () => {
      await router.close();
      await a.close();
      await b.close();
    });

    const view = async (id: string) =>
      JSON.parse((await call(admin, 'GET', `/backends/${encodeURIComponent(id)}`)).body).backend;
    const backendUp = async (id: string) => {
      const text = (await call(admin, 'GET', '/metrics')).body;
      const line = text.split('\n').find((l) => l.startsWith(`switchboard_backend_up{backend="${id}"}`));
      return line?.split(' ')[1];
    };
    /** Which backend answers each of `n` requests. */
    const spread = async (n: number) => {
      const seen: Record<string, number> = {};
      for (let i = 0; i < n; i++) {
        const res = await httpGet(router.port(), '/', { host: 'm.test' });
        const k = String(res.headers['x-backend'] ?? res.status);
        seen[k] = (seen[k] ?? 0) + 1;
      }
      return seen;
    };

    it('a disabled backend is not probed and shows no verdict; enabled, it waits for succNum probes', async () => {
      await eventually(() => a.probes >= 2 && b.probes >= 2, 10_000, 'both backends probed');
      expect(Object.keys(await spread(8)).sort()).toEqual(['a', 'b']);

      const disabled = await call(admin, 'POST', `/backends/${a.address}/disable`);
      expect(disabled.status).toBe(200);
      expect(JSON.parse(disabled.body).backend).toMatchObject({
        state: 'disabled',
        healthy: false,
        available: false,
        probing: false,
      });
      expect(await backendUp(a.address)).toBe('0');
      // A probe in flight at the disable is aborted; none is sent after it.
      await sleep(100);
      const seen = a.probes;
      const bSeen = b.probes;
      await sleep(400); // ten intervals
      expect(a.probes).toBe(seen);
      expect(b.probes).toBeGreaterThan(bSeen); // the checker of the other backend runs on
      // A reload while it is disabled (the book's checkers are updated) does not restart them.
      const file = join(router.dir, 'switchboard.yaml');
      const config = parse(await readFile(file, 'utf8'));
      config.addressBook.products.p.hosts.push('n.test');
      await writeFile(file, stringify(config));
      expect(JSON.parse((await call(admin, 'POST', '/reload')).body)).toMatchObject({ ok: true, changed: true });
      await sleep(300);
      expect(a.probes).toBe(seen);
      expect(await view(a.address)).toMatchObject({ state: 'disabled', healthy: false, probing: false });

      // While in maintenance the backend breaks; enabled again it must not take traffic on the
      // verdict it had before the disable.
      a.healthy = false;
      const enabled = await call(admin, 'POST', `/backends/${a.address}/enable`);
      expect(JSON.parse(enabled.body).backend).toMatchObject({ state: 'down', mode: 'up', healthy: false });
      expect(await spread(6)).toEqual({ b: 6 });
      await eventually(() => a.probes >= seen + 3, 10_000, 'checks of the enabled backend resume');
      expect((await view(a.address)).healthy).toBe(false);
      expect(await spread(4)).toEqual({ b: 4 });

      // It heals: succNum (2) successful probes bring it back.
      a.healthy = true;
      await eventually(async () => (await view(a.address)).available === true, 10_000, 'a back after succNum probes');
      expect(await backendUp(a.address)).toBe('1');
      expect((await spread(8)).a).toBeGreaterThan(0);
    });

    it('a drained backend keeps being checked', async () => {
      await call(admin, 'POST', `/backends/${b.address}/drain`);
      const seen = b.probes;
      await eventually(() => b.probes >= seen + 3, 10_000, 'probes of the drained backend');
      expect(await view(b.address)).toMatchObject({ state: 'draining', healthy: true, probing: true });
      await call(admin, 'POST', `/backends/${b.address}/enable`);
      expect(await view(b.address)).toMatchObject({ state: 'up', healthy: true, available: true });
    });
  });
