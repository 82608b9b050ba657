/**
 * What the `policies:` rules hold, visible through the real router's admin API (issue 42 item
 * 5): `switchboard_policy_keys{policy}` in /metrics (the keys each rule's counters hold) and
 * `GET /policies` (point, when, selectors, counts by action, keys), on the net panel and the
 * worker panel (its counters are one shared store: the main thread reads every thread's keys).
 */
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

const WILDCARD = [{ name: 'web', address: '0.0.0.0:0' }];
const CLIENTS = ['127.0.0.1', '127.0.0.2', '127.0.0.3'];

/** One GET from `from` on its own connection; resolves with the reply. */
function get(port: number, from: string, path = '/'): Promise<string> {
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

const POLICIES = [
  {
    name: 'api-rate',
    use: 'rate-limit',
    when: 'req_path_prefix_in("/api", false)',
    options: { key: 'client-ip', rate: '100/s' },
  },
  { name: 'maint', use: 'respond', products: ['blog'], options: { status: 503 } },
  { name: 'admin', use: 'block', when: 'req_path_prefix_in("/admin", false)', action: { respond: 403 } },
];

describe.each([
  { label: 'net', panel: 'net' },
  { label: 'worker', panel: { name: 'worker', threads: 2 } },
])('policy key tables and GET /policies ($label)', ({ panel }) => {
  let backend: TestBackend | undefined;
  let router: TestRouter | undefined;
  afterEach(async () => {
    await router?.close();
    await backend?.close();
    router = undefined;
    backend = undefined;
  });

  it('the keys each rule holds, its point, when, selectors and counts', async () => {
    backend = await startHttpBackend('a');
    const dir = await tempDir({ 'servers.yaml': `- { host: "*", backends: [${backend.address}] }\n` });
    router = await startTestRouter(
      {
        panel,
        listeners: WILDCARD,
        admin: { address: '127.0.0.1:0' },
        addressBook: { name: 'file', path: 'servers.yaml' },
        policies: POLICIES,
      },
      { dir },
    );
    const r = router;
    const admin = `http://127.0.0.1:${r.router.admin?.address().port}`;
    const keys = async () => {
      const m = /^switchboard_policy_keys\{policy="api-rate"\} (\d+)$/m.exec(
        await (await fetch(`${admin}/metrics`)).text(),
      );
      return m === null ? undefined : Number(m[1]);
    };
    expect(await keys()).toBe(0);
    // Three clients under /api (three keys), one twice; one elsewhere (no key); one /admin.
    for (const from of [...CLIENTS, '127.0.0.1']) expect(await get(r.port(), from, '/api/x')).toContain(' 200 ');
    expect(await get(r.port(), '127.0.0.4', '/')).toContain(' 200 ');
    expect(await get(r.port(), '127.0.0.4', '/admin')).toContain(' 403 ');
    expect(await keys()).toBe(3);
    const metrics = await (await fetch(`${admin}/metrics`)).text();
    // Rules that count nothing have no key table.
    expect(metrics).not.toMatch(/switchboard_policy_keys\{policy="(maint|admin)"\}/);
    await eventually(async () => {
      const v = (await (await fetch(`${admin}/policies`)).json()) as { policies: { actions: object }[] };
      return Object.keys(v.policies[2]?.actions ?? {}).length > 0;
    });
    const view = (await (await fetch(`${admin}/policies`)).json()) as { policies: unknown[] };
    expect(view.policies).toEqual([
      {
        name: 'api-rate',
        use: 'rate-limit',
        point: 'request',
        when: 'req_path_prefix_in("/api", false)',
        actions: {},
        keys: 3,
      },
      { name: 'maint', use: 'respond', point: 'routed', products: ['blog'], actions: {} },
      {
        name: 'admin',
        use: 'block',
        point: 'request',
        when: 'req_path_prefix_in("/admin", false)',
        actions: { answer: 1 },
      },
    ]);
  });
});
