/**
 * `switchboard route` agrees with the data plane (issue 19 item 5), through the real CLI and a
 * running router: a Host with a port routes as real traffic with that Host does, the backend it
 * says attempt 1 picks is the one real requests reach (client address from a trusted
 * X-Forwarded-For, so several clients spread over the GSLB split), `--sni` works alone (TLS
 * passthrough), `--json` has one shape, and exit codes are 0 routed / 1 no route / 2 usage /
 * 3 invalid config, with no stack trace.
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startHttpBackend, startTcpBackend, type TcpBackend, type TestBackend } from '../harness/backend.ts';
import { type CliRouter, spawnCli } from '../harness/cli.ts';
import { hasStack, runCli } from '../harness/cli-run.ts';
import { EXPLANATION_KEYS } from '../harness/explanation.ts';
import { httpGet } from '../harness/http.ts';
import { eventually, tempDir } from '../harness/router.ts';

let dir: string;
let config: string;
let dc1: TestBackend;
let dc2: TestBackend;
let tlsBackend: TcpBackend;
let router: CliRouter;
let web: number;
let tlsPort: number;

beforeAll(async () => {
  dc1 = await startHttpBackend('dc1');
  dc2 = await startHttpBackend('dc2');
  tlsBackend = await startTcpBackend('tls');
  dir = await tempDir();
  config = join(dir, 'switchboard.yaml');
  const one = (address: string) => ({ subclusters: { s1: { weight: 1, backends: [{ address }] } } });
  await writeFile(
    config,
    stringify({
      listeners: [
        {
          name: 'web',
          address: '127.0.0.1:0',
          clientIpFrom: 'header',
          trustedSources: ['127.0.0.1/32'],
        },
        { name: 'tls', address: '127.0.0.1:0', tls: 'passthrough' },
      ],
      log: { level: 'info', access: 'off' },
      limits: { drainTimeout: '1s' },
      addressBook: {
        name: 'bfe',
        products: {
          web: { hosts: ['www.example.test'], rules: [{ cond: 'default_t()', cluster: 'web' }] },
          secure: { hosts: ['secure.example.test'], basicRules: [{ hosts: ['secure.example.test'], cluster: 'tls' }] },
        },
        clusters: {
          web: {
            subclusters: {
              dc1: { weight: 70, backends: [{ address: dc1.address }] },
              dc2: { weight: 30, backends: [{ address: dc2.address }] },
            },
          },
          tls: one(tlsBackend.address),
        },
      },
    }),
  );
  router = spawnCli(config);
  web = await router.port('web');
  tlsPort = await router.port('tls');
});

afterAll(async () => {
  router?.kill();
  await router?.exited;
  await Promise.all([dc1?.close(), dc2?.close(), tlsBackend?.close()]);
  await rm(dir, { recursive: true, force: true });
});

const NAMES = (): Record<string, string> => ({ [dc1.address]: 'dc1', [dc2.address]: 'dc2' });

describe('switchboard route matches real traffic', () => {
  it('a Host with a port routes, and the chosen backend is the one real requests reach', async () => {
    const seen = new Set<string>();
    for (const client of ['192.0.2.1', '192.0.2.2', '192.0.2.3', '192.0.2.4', '192.0.2.5', '192.0.2.6']) {
      const host = `www.example.test:${web}`;
      const xff = `X-Forwarded-For: ${client}`;
      const r = await runCli(['route', '-c', config, '--host', host, '--header', xff, '--json']);
      expect(r.code, r.stderr).toBe(0);
      const e = JSON.parse(r.stdout) as {
        request: { host: string; port: number; clientIp: string };
        chosen: { backend: string };
      };
      expect(e.request).toMatchObject({ host: 'www.example.test', port: web, clientIp: client });
      const real = await httpGet(web, '/', { host, headers: { 'X-Forwarded-For': client } });
      expect(real.status).toBe(200);
      expect(real.headers['x-backend']).toBe(NAMES()[e.chosen.backend]);
      seen.add(String(real.headers['x-backend']));
    }
    // The clients spread over both sub-clusters, so the agreement is not an accident of one pin.
    expect([...seen].sort()).toEqual(['dc1', 'dc2']);
  }, 60_000);

  it('--sni alone explains TLS passthrough routing, as a real ClientHello is routed', async () => {
    const r = await runCli(['route', '-c', config, '--sni', 'secure.example.test', '--listener', 'tls']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('request: tls sni secure.example.test');
    expect(r.stdout).toContain(`chosen: ${tlsBackend.address}`);
    const before = tlsBackend.hits;
    const s = tlsConnect({
      port: tlsPort,
      host: '127.0.0.1',
      servername: 'secure.example.test',
      rejectUnauthorized: false,
    });
    s.on('error', () => {});
    await eventually(() => tlsBackend.hits > before);
    s.destroy();
  });

  it('text and --json give the same facts; a miss exits 1 with the reason', async () => {
    const text = await runCli(['route', '-c', config, '--host', 'WWW.Example.Test.:8080']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/request: host www\.example\.test port 8080 path \//);
    expect(text.stdout).toMatch(/product: web/);
    expect(text.stdout).toMatch(/cluster: web/);
    expect(text.stdout).toMatch(/chosen: 127\.0\.0\.1:\d+ in subcluster dc[12]/);
    const miss = await runCli(['route', '-c', config, '--host', 'nowhere.test', '--json']);
    expect(miss.code).toBe(1);
    const e = JSON.parse(miss.stdout) as Record<string, unknown>;
    expect(Object.keys(e).sort()).toEqual([...EXPLANATION_KEYS]);
    expect(e).toMatchObject({ routed: false, chosen: null, cluster: null });
    expect(String(e.reason)).toContain('not in the host table');
    const real = await httpGet(web, '/', { host: 'nowhere.test' });
    expect(real.status).toBe(404);
  });

  it.each([
    [['route', '--path', '/'], 2, /give --host, --sni or both/],
    [['route', '--host', 'a@b'], 2, /userinfo is not allowed/],
    [['route', '--host', 'x', '--header', 'nocolon'], 2, /expected NAME:VALUE/],
    [['route', '--host', 'x', '--bogus'], 2, /unknown option/],
    [['route', '--host', 'x', '--client', 'abc'], 2, /client "abc": expected an IP address/],
    [['route', '--host', 'x', '--listener', 'nope'], 2, /no such listener \(have web, tls\)/],
    [['route', '--host', 'x', '-c', '/nonexistent/switchboard.yaml'], 3, /config file not found/],
  ])('%j exits %i with one clear message', async (args, code, message) => {
    const withConfig = args.includes('-c') ? args : [...args, '-c', config];
    const r = await runCli(withConfig);
    expect(r.code).toBe(code);
    expect(r.stderr).toMatch(message);
    expect(hasStack(r.stderr)).toBe(false);
  });
});
