/**
 * The explainer follows live state (issue 45 item 1), on every panel (net per-request, net
 * per-connection, http2, worker): after a drain, a disable, a weight change to 0 and a backend
 * that stops (active health checks), `POST /explain` and `switchboard route --admin` name the
 * backends real requests reach. Each step drives the admin API, asks the explainer, then sends
 * real requests (one connection each) and compares the backends they reach with the ones the
 * explanation says take traffic; the skipped ones say why, and the all-healthy answer is given
 * when it differs. Then, on one router: the offline answer says it assumes every backend
 * healthy, a wrong token, an unreachable admin and one that closes the connection unanswered
 * (its connection caps) are one line and exit 4, a bad flag through the admin is exit 2.
 */
import { type AddressInfo, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PANELS, type PanelUnderTest, panelKeys } from '../conformance/panel-under-test.ts';
import { adminCall } from '../harness/admin.ts';
import { closedPort, startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { runCli } from '../harness/cli-run.ts';
import { httpGet } from '../harness/http.ts';
import { eventually, startTestRouter } from '../harness/router.ts';

const TOKEN = 'explain-s3cret';
const HOST = 'www.example.test';
/** One worker panel is enough: its engine does not change how the explainer reads state. */
const UNDER_TEST = PANELS.filter((p) => p.label !== 'worker (http2)');

interface Explained {
  id: string;
  state: string;
  takesTraffic: boolean;
  effectiveWeight: number;
  slowStartPercent: number | null;
  why: string | null;
}
interface Explanation {
  backendState: string;
  chosen: { backend: string } | null;
  cluster: { subclusters: { backends: Explained[] }[] };
  allHealthy: { chosen: string | null; note: string } | null;
}

/** Backends `a` and `b` in one sub-cluster, slow start 10 min, active TCP checks every 100 ms. */
function config(p: PanelUnderTest, a: TestBackend, b: TestBackend): Record<string, unknown> {
  const healthCheck = { type: 'tcp', interval: '100ms', timeout: '500ms', failNum: 1, active: true };
  return {
    ...panelKeys(p),
    admin: { address: '127.0.0.1:0', token: TOKEN },
    addressBook: {
      name: 'bfe',
      products: { p: { hosts: [HOST], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
      clusters: {
        c: {
          slowStart: '10m',
          healthCheck,
          subclusters: { s1: { weight: 1, backends: [{ address: a.address }, { address: b.address }] } },
        },
      },
    },
  };
}

/** A router on `p` with backends a and b, and what the steps ask of it. */
async function setup(p: PanelUnderTest) {
  const a = await startHttpBackend('a');
  const b = await startHttpBackend('b');
  const router = await startTestRouter(config(p, a, b));
  const admin = router.router.admin!.address().port;
  const names: Record<string, string> = { [a.address]: 'a', [b.address]: 'b' };
  const explain = async (body: Record<string, unknown> = { host: HOST }): Promise<Explanation> => {
    const r = await adminCall(admin, TOKEN, 'POST', '/explain', body);
    expect(r.status, r.body).toBe(200);
    return (JSON.parse(r.body) as { explanation: Explanation }).explanation;
  };
  const backend = (e: Explanation, name: string): Explained =>
    e.cluster.subclusters.flatMap((s) => s.backends).find((x) => names[x.id] === name)!;
  const takers = (e: Explanation): string[] =>
    e.cluster.subclusters
      .flatMap((s) => s.backends)
      .filter((x) => x.takesTraffic)
      .map((x) => names[x.id]!)
      .sort();
  const control = async (id: string, action: string, body?: unknown): Promise<void> => {
    const r = await adminCall(admin, TOKEN, 'POST', `/backends/${encodeURIComponent(id)}/${action}`, body);
    expect(r.status, r.body).toBe(200);
  };
  /** Six real requests, one connection each: the backends they reach. */
  const reached = async (): Promise<string[]> => {
    const seen = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const res = await httpGet(router.port(), '/', { host: HOST });
      expect(res.status).toBe(200);
      seen.add(String(res.headers['x-backend']));
    }
    return [...seen].sort();
  };
  /** The explanation is live, its chosen backend takes traffic, and real traffic reaches exactly the takers. */
  const agrees = async (e: Explanation): Promise<void> => {
    expect(e.backendState).toBe('live');
    expect(takers(e)).toContain(names[e.chosen!.backend]);
    expect(await reached()).toEqual(takers(e));
  };
  const close = async () => {
    await router.close();
    await Promise.all([a.close(), b.close()]);
  };
  return { a, b, router, admin, explain, backend, takers, control, agrees, close };
}

type Setup = Awaited<ReturnType<typeof setup>>;

describe.each(UNDER_TEST)('the explainer follows live state: $label', (p) => {
  let s: Setup;
  beforeAll(async () => {
    s = await setup(p);
  });
  afterAll(async () => {
    await s?.close();
  });

  it('drain, disable, weight 0, a backend down: the explanation names the backends real requests reach', async () => {
    const { a, b, explain, backend, takers, control, agrees } = s;
    let e = await explain();
    expect(takers(e)).toEqual(['a', 'b']);
    expect(e.allHealthy).toBeNull();
    await agrees(e);

    await control(a.address, 'drain');
    e = await explain();
    expect(e.chosen?.backend).toBe(b.address);
    expect(backend(e, 'a')).toMatchObject({ state: 'draining', takesTraffic: false });
    expect(backend(e, 'a').why).toMatch(/^drained \(local, by .+ at \d{4}-\d\d-\d\dT/);
    expect(e.allHealthy?.chosen).toBe(a.address);
    expect(e.allHealthy?.note).toContain('(now drained (local');
    await agrees(e);
    const cli = await runCli(['route', '--admin', `127.0.0.1:${s.admin}`, '--token', TOKEN, '--host', HOST]);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toContain(`chosen: ${b.address} in subcluster s1`);
    expect(cli.stdout).toContain(`    ${a.address} w1: skipped: drained (local, by `);
    expect(cli.stdout).toContain(`    ${b.address} w1: takes traffic\n`);
    expect(cli.stdout).toContain(
      `note: with every backend healthy at its configured weight, attempt 1 would go to ${a.address}`,
    );
    expect(cli.stdout).not.toContain('assumed:');

    // Leaving draining restarts a's slow start (10 min): it takes traffic at a fraction of its weight.
    await control(a.address, 'enable');
    await control(b.address, 'disable');
    e = await explain();
    expect(e.chosen?.backend).toBe(a.address);
    expect(backend(e, 'b')).toMatchObject({ state: 'disabled', takesTraffic: false });
    expect(backend(e, 'b').why).toMatch(/^disabled \(local, by /);
    expect(backend(e, 'a')).toMatchObject({ state: 'up', takesTraffic: true });
    expect(backend(e, 'a').slowStartPercent).toBeLessThan(100);
    expect(backend(e, 'a').why).toMatch(/^slow start: [\d.]+% of its weight \(up since /);
    expect(e.allHealthy).toBeNull();
    await agrees(e);

    // Leaving disabled restarts b's checks from down: a probe brings it back.
    await control(b.address, 'enable');
    await control(a.address, 'weight', { weight: 0 });
    await eventually(async () => backend(await explain(), 'b').takesTraffic, 10_000, 'b up after enable');
    e = await explain();
    expect(e.chosen?.backend).toBe(b.address);
    expect(backend(e, 'a')).toMatchObject({ takesTraffic: false, effectiveWeight: 0 });
    expect(backend(e, 'a').why).toMatch(/^weight 0 \(admin override of 1, local, by /);
    expect(e.allHealthy?.chosen).toBe(a.address);
    await agrees(e);

    // b stops: the active check (failNum 1) holds it down; the explanation and traffic follow.
    await control(a.address, 'weight', { weight: null });
    await b.close();
    await eventually(async () => backend(await explain(), 'b').state === 'down', 10_000, 'b down');
    e = await explain();
    expect(backend(e, 'b')).toMatchObject({ takesTraffic: false });
    expect(backend(e, 'b').why).toMatch(
      /^unhealthy: health checks hold it down in cluster c \(last probe failed at \d{4}-\d\d-\d\dT[\d:.]+Z\)$/,
    );
    expect(e.chosen?.backend).toBe(a.address);
    await agrees(e);
  }, 60_000);
});

describe('switchboard route: offline says what it assumes; --admin failures are one line', () => {
  let s: Setup;
  beforeAll(async () => {
    s = await setup(PANELS[0]!);
  });
  afterAll(async () => {
    await s?.close();
  });

  it('with a drained backend the offline answer assumes it healthy and says so; --admin gives the live one', async () => {
    await s.control(s.a.address, 'drain');
    const file = `${s.router.dir}/switchboard.yaml`;
    const offline = await runCli(['route', '-c', file, '--host', HOST]);
    expect(offline.code, offline.stderr).toBe(0);
    expect(offline.stdout).toContain(`chosen: ${s.a.address}`);
    expect(offline.stdout).toContain(
      'assumed: every backend healthy at its configured weight (offline; --admin URL asks the running router)',
    );
    const live = await runCli(['route', '--admin', `http://127.0.0.1:${s.admin}/`, '--host', HOST, '--json'], {
      env: { SWITCHBOARD_ADMIN_TOKEN: TOKEN },
    });
    expect(live.code, live.stderr).toBe(0);
    const e = JSON.parse(live.stdout) as Explanation;
    expect(e).toMatchObject({ backendState: 'live', chosen: { backend: s.b.address } });
    await s.control(s.a.address, 'enable');
  }, 60_000);

  it('a wrong token, an unreachable admin and one that closes unanswered exit 4 with one line; a bad flag through the admin exits 2', async () => {
    const url = `127.0.0.1:${s.admin}`;
    const wrong = await runCli(['route', '--admin', url, '--token', 'nope', '--host', HOST]);
    expect(wrong.code).toBe(4);
    expect(wrong.messages).toEqual([
      `route: admin http://${url}/explain: the token was refused (401 unauthorized): give --token or set SWITCHBOARD_ADMIN_TOKEN`,
    ]);
    const port = await closedPort();
    const gone = await runCli(['route', '--admin', `127.0.0.1:${port}`, '--token', TOKEN, '--host', HOST]);
    expect(gone.code).toBe(4);
    expect(gone.messages).toHaveLength(1);
    expect(gone.messages[0]).toMatch(
      new RegExp(`^route: admin http://127\\.0\\.0\\.1:${port}/explain: cannot ask the router: connect ECONNREFUSED`),
    );
    // A listener that closes each connection unanswered, as the admin listener does over its caps.
    const closer = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => closer.listen(0, '127.0.0.1', () => resolve()));
    const closing = `127.0.0.1:${(closer.address() as AddressInfo).port}`;
    const unanswered = await runCli(['route', '--admin', closing, '--token', TOKEN, '--host', HOST]);
    closer.close();
    expect(unanswered.code).toBe(4);
    expect(unanswered.messages).toHaveLength(1);
    expect(unanswered.messages[0]).toMatch(
      new RegExp(
        `^route: admin http://${closing}/explain: cannot ask the router: .*\\(closed unanswered: over admin\\.maxConnections or admin\\.maxConnectionsPerClient\\?\\)$`,
      ),
    );
    const bad = await runCli(['route', '--admin', url, '--token', TOKEN, '--host', HOST, '--listener', 'nope']);
    expect(bad.code).toBe(2);
    expect(bad.messages).toEqual(['route: listener nope: no such listener (have web)']);
    expect(wrong.stdout + gone.stdout + unanswered.stdout + bad.stdout).toBe('');
  }, 60_000);
});
