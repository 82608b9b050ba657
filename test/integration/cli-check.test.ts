/**
 * Issue 19 item 2: `switchboard check` in one pass — schema, plugin and address-book errors
 * together, one `<config path>: <message>` per line, "did you mean" for misspelt keys, names and
 * condition primitives — and a routes file recognised as such.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkText, runCli, STACK } from '../harness/cli-run.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'swb-cli-check-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function check(name: string, text: string) {
  const r = await checkText(dir, name, text);
  expect(r.stderr).not.toMatch(STACK);
  return r;
}

/** One problem per line, each `<config path>: <message>`. */
const LINE = /^[A-Za-z][\w-]*(\.[\w-]+|\[\d+\])*: \S/;

describe('switchboard check: every error in one pass', () => {
  it('schema, panel, operator and address-book option errors together, each with its path and a suggestion', async () => {
    const r = await check(
      'many.yaml',
      `panel: htpp2
listeners:
  - { name: web, address: 127.0.0.1:0, tls: terminat }
limits: { idleTimout: 5s }
operator: round-robbin
addressBook:
  name: bfe
  products: { web: { hosts: [www.example.test], rules: [{ cond: "default_t()", cluster: web }] } }
  clusters:
    web:
      balance: wrrr
      healthCheck: { type: htp }
      subclusters: { s1: { weight: 1, backends: [{ address: 127.0.0.1:9, wieght: 2 }] } }
`,
    );
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.messages.sort()).toEqual(
      [
        'listeners[0].tls: invalid option: expected one of "off"|"passthrough"|"terminate" (did you mean "terminate"?)',
        'limits.idleTimout: unknown key (did you mean "idleTimeout"?)',
        'panel.name: unknown panel "htpp2" (did you mean "http2"?); known: net, http2, worker',
        'operator.name: unknown operator "round-robbin" (did you mean "round-robin"?); known: bfe, random, round-robin, least-connections, consistent-hash, p2c, ewma or a module path',
        'addressBook.clusters.web.balance: invalid option: expected one of "wrr"|"wlc"|"sticky" (did you mean "wrr"?)',
        'addressBook.clusters.web.healthCheck.type: invalid option: expected one of "tcp"|"http" (did you mean "http"?)',
        'addressBook.clusters.web.subclusters.s1.backends[0].wieght: unknown key (did you mean "weight"?)',
        '1 further check skipped until these are fixed:',
        '  address book not built: addressBook has errors',
      ].sort(),
    );
    expect(r.stderr).not.toMatch(STACK);
  });

  it('schema errors and routing-table build errors (conditions) in the same run', async () => {
    const r = await check(
      'cond.yaml',
      `listeners: [{ name: web, address: 127.0.0.1:0 }]
limits: { idleTimout: 5s }
addressBook:
  name: bfe
  products:
    web:
      hosts: [www.example.test]
      rules: [{ cond: 'req_header_valu_in("X-Canary", "1", false)', cluster: web }]
  clusters: { web: { subclusters: { s1: { weight: 1, backends: [{ address: 127.0.0.1:9 }] } } } }
`,
    );
    expect(r.code).toBe(3);
    expect(r.messages).toEqual([
      'limits.idleTimout: unknown key (did you mean "idleTimeout"?)',
      'addressBook.products.web.rules[0].cond: column 1: primitive req_header_valu_in not found (did you mean "req_header_value_in"?)',
    ]);
    for (const line of r.messages) expect(line).toMatch(LINE);
  });

  it('misspelt cluster, product and named-condition references get a suggestion', async () => {
    const r = await check(
      'refs.yaml',
      `listeners: [{ name: web, address: 127.0.0.1:0 }]
addressBook:
  name: bfe
  conditions: { canary: 'req_header_value_in("X", "1", false)' }
  defaultProduct: wbe
  products:
    web: { hosts: [www.example.test], rules: [{ cond: "$canry", cluster: wbe }, { cond: "default_t()", cluster: web }] }
  clusters: { web: { subclusters: { s1: { weight: 1, backends: [{ address: 127.0.0.1:9 }] } } } }
`,
    );
    expect(r.code).toBe(3);
    expect(r.messages.sort()).toEqual([
      'addressBook.defaultProduct: product wbe does not exist (did you mean "web"?)',
      'addressBook.products.web.rules[0].cluster: cluster wbe does not exist (did you mean "web"?)',
      'addressBook.products.web.rules[0].cond: column 1: unknown condition $canry (did you mean "canary"?)',
    ]);
  });

  it('listener certificates that do not exist are reported beside schema errors elsewhere', async () => {
    const r = await check(
      'certs.yaml',
      `listeners:
  - { name: web, address: 127.0.0.1:0, tls: terminate, certificates: [{ cert: a.crt, key: a.key }] }
limits: { idleTimout: 5s }
`,
    );
    expect(r.code).toBe(3);
    expect(r.messages).toEqual([
      'limits.idleTimout: unknown key (did you mean "idleTimeout"?)',
      `listeners[0].certificates[0].cert: file not found: ${join(dir, 'a.crt')}`,
      `listeners[0].certificates[0].key: file not found: ${join(dir, 'a.key')}`,
    ]);
  });

  it('a cluster tls.ca that cannot be read names addressBook.clusters.<name>.tls.ca', async () => {
    const r = await check(
      'ca.yaml',
      `listeners: [{ name: web, address: 127.0.0.1:0 }]
addressBook:
  name: bfe
  products: { web: { hosts: [www.example.test], rules: [{ cond: "default_t()", cluster: web }] } }
  clusters: { web: { tls: { ca: missing-ca.crt }, subclusters: { s1: { weight: 1, backends: [{ address: 127.0.0.1:9 }] } } } }
`,
    );
    expect(r.code).toBe(3);
    expect(r.messages).toHaveLength(1);
    expect(r.messages[0]).toMatch(/^addressBook\.clusters\.web\.tls\.ca: file not found: .*missing-ca\.crt$/);
  });

  it('unknown keys are reported, never stripped: in plugin options too', async () => {
    const r = await check(
      'keys.yaml',
      `listeners: [{ name: web, address: 127.0.0.1:0, adress: x }]
operator: { name: consistent-hash, colour: red }
addressBook: { name: file, path: servers.yaml, wacth: false }
`,
    );
    expect(r.code).toBe(3);
    expect(r.messages).toContain('listeners[0].adress: unknown key (did you mean "address"?)');
    expect(r.messages).toContain('addressBook.wacth: unknown key (did you mean "watch"?)');
    expect(r.messages.some((l) => l.startsWith('operator.colour: unknown key'))).toBe(true);
  });

  it('a valid config: ok on stdout, exit 0', async () => {
    const r = await runCli(['check', '--config', 'conf/switchboard.yaml']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/conf\/switchboard\.yaml: ok\n$/);
    expect(r.stderr).toBe('');
  });
});

describe('switchboard check on a routes file (what import-bfe writes)', () => {
  it('says what it is and how to reference it from a config', async () => {
    const r = await check(
      'routes.yaml',
      `products: { web: { hosts: [www.example.test], rules: [{ cond: "default_t()", cluster: web }] } }
clusters: { web: { subclusters: { s1: { weight: 1, backends: [{ address: 127.0.0.1:9 }] } } } }
`,
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('a routes file (1 products, 1 clusters), not a router config');
    expect(r.stdout).toMatch(/addressBook:\n\s+name: bfe\n\s+routes: routes\.yaml\n/);
  });

  it('what import-bfe writes is recognised the same way', async () => {
    const imported = await runCli(['import-bfe', 'test/fixtures/bfe/conf']);
    expect(imported.code).toBe(0);
    const r = await check('imported.yaml', imported.stdout);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('imported.yaml: ok, a routes file (');
    expect(r.stdout).toContain('    routes: imported.yaml\n');
  });

  it('a file book list (conf/servers.yaml) is recognised too', async () => {
    const r = await runCli(['check', '--config', 'conf/servers.yaml']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('servers.yaml: ok, a file address book list (');
    expect(r.stdout).toMatch(/addressBook:\n\s+name: file\n\s+path: servers\.yaml\n/);
  });

  it('a routes file with errors: each with its path, exit 3', async () => {
    const r = await check(
      'bad-routes.yaml',
      `products: { web: { hosts: [www.example.test], rules: [{ cond: "default_t()", cluster: nope }] } }
clusters: {}
`,
    );
    expect(r.code).toBe(3);
    expect(r.messages.length).toBeGreaterThan(0);
    for (const line of r.messages) expect(line).toMatch(/^addressBook\.routes: .*bad-routes\.yaml: products\.web/);
  });
});
