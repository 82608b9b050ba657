/**
 * Issue 45 items 5 and 8, through the real binary: `switchboard check` runs every check that
 * can run on what parsed (app/config-sections.ts) and lists mistakes of five kinds in one run,
 * says which further checks wait for which section, and words YAML and key errors plainly (no
 * dangling `:`, never zod's "expected string, received undefined"). A reload with errors still
 * refuses with every reason and keeps serving the last good config.
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpBackend } from '../harness/backend.ts';
import { spawnCli } from '../harness/cli.ts';
import { checkText, STACK } from '../harness/cli-run.ts';
import { httpGet } from '../harness/http.ts';
import { tempDir } from '../harness/router.ts';

let dir: string;
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** `switchboard check` on `text`: never a stack, nothing on stdout (every config here is invalid). */
async function check(name: string, text: string) {
  const r = await checkText(dir, name, text);
  expect(r.stderr).not.toMatch(STACK);
  expect(r.stdout).toBe('');
  return r;
}

const BOOK = (cond: string, balance = 'wrr') => `addressBook:
  name: bfe
  products: { web: { hosts: [www.example.test], rules: [{ cond: '${cond}', cluster: web }] } }
  clusters: { web: { balance: ${balance}, subclusters: { s1: { weight: 1, backends: [{ address: 127.0.0.1:9 }] } } } }
`;

describe('switchboard check: one pass', () => {
  it('five mistakes of five kinds, all in one run (two of them used to wait for the others to be fixed)', async () => {
    const r = await check(
      'five.yaml',
      `listeners:
  - { name: web, address: 127.0.0.1:0, tls: terminate, certificates: [{ cert: a.crt, key: a.key }] }
admin: { address: 127.0.0.1:0, headersTimeout: 20s, requestTimeout: 10s }
limits: { idleTimeout: soon }
policies:
  - { name: deny, use: respond, when: 'req_hst_in("x.test")', options: { status: 403 } }
${BOOK('req_header_valu_in("X", "1", false)')}`,
    );
    expect(r.code).toBe(3);
    expect(r.messages).toEqual([
      // the schema: a value
      'limits.idleTimeout: expected a duration like 500ms, 2s or 1m, got "soon"',
      // a cross-section rule, which zod skips when another section has a type error
      'admin.headersTimeout: expected at most admin.requestTimeout',
      // a policy's condition, compiled only for a valid config before
      'policies[0] (deny): when: column 1: primitive req_hst_in not found (did you mean "req_host_in"?)',
      // the TLS material of the listeners
      `listeners[0].certificates[0].cert: file not found: ${join(dir, 'a.crt')}`,
      `listeners[0].certificates[0].key: file not found: ${join(dir, 'a.key')}`,
      // the address book's build: a routing-table condition
      'addressBook.products.web.rules[0].cond: column 1: primitive req_header_valu_in not found (did you mean "req_header_value_in"?)',
    ]);
  });

  it('a check that cannot run is named with the section it waits for', async () => {
    const r = await check(
      'skipped.yaml',
      `listeners: [{ name: web, address: 127.0.0.1:0 }]
fleet: { etcd: { endpoints: [http://127.0.0.1:1] }, leaseTtl: 1500ms }
log: { access: { file: stdout, rules: [{ when: 'req_host_in("a")', sample: 2 }] } }
policies:
  - { name: fleet-rate, use: rate-limit, when: 'req_hst_in("x")', options: { key: client-ip, rate: 10/s, scope: fleet } }
${BOOK('req_header_valu_in("X", "1", false)', 'wrrr')}`,
    );
    expect(r.code).toBe(3);
    expect(r.messages).toEqual([
      'log.access.rules[0].sample: expected at most 1',
      'fleet.leaseTtl: expected whole seconds, at least 2s (etcd leases)',
      'addressBook.clusters.web.balance: invalid option: expected one of "wrr"|"wlc"|"sticky" (did you mean "wrr"?)',
      '3 further checks skipped until these are fixed:',
      '  policies not compiled: fleet has errors',
      '  access-log rules not compiled: log has errors',
      '  address book not built: addressBook has errors',
    ]);
  });
});

describe('switchboard check: the wording of YAML and key errors', () => {
  it('a YAML syntax error: file:line:col and the problem, no dangling colon', async () => {
    const r = await check('syntax.yaml', 'listeners:\n  - { name: web, address: 127.0.0.1:0\nlimits: { a: 1 }\n');
    expect(r.code).toBe(3);
    expect(r.messages).toEqual([
      `${r.file}:3:1: invalid YAML: flow map in block collection must be sufficiently indented and end with a }`,
    ]);
  });

  it('a misspelt key names the one it looks like (not also "missing"); a missing key and a wrong type in plain words', async () => {
    const r = await check(
      'keys.yaml',
      `listners: [{ name: web, address: 127.0.0.1:0 }]
admin: { adress: 127.0.0.1:0 }
limits: { maxConnections: many }
`,
    );
    expect(r.code).toBe(3);
    expect(r.messages).toEqual([
      'limits.maxConnections: expected a number, got a string',
      // not also `admin.address: missing key` nor `listeners: missing key`: the suggestion names them
      'admin.adress: unknown key (did you mean "address"?)',
      'listners: unknown key (did you mean "listeners"?)',
    ]);
    const bare = await check('missing.yaml', 'listeners: [{ name: web }]\nlimits:\n');
    expect(bare.messages).toEqual([
      'listeners[0].address: missing key',
      'limits: expected a mapping, got an empty value',
    ]);
    for (const line of r.messages) expect(line).not.toMatch(/received|invalid input/i);
  });
});

it('a reload with errors refuses with every reason (each bad policy rule too) and keeps the last good config serving', async () => {
  const a = await startHttpBackend('a');
  const rdir = await tempDir({ 'servers.yaml': `- { host: "*", backends: [${a.address}] }\n` });
  const file = join(rdir, 'switchboard.yaml');
  const good = 'listeners: [{ name: web, address: 127.0.0.1:0 }]\naddressBook: { name: file, path: servers.yaml }\n';
  await writeFile(file, `${good}log: { level: info, access: "off" }\n`);
  const cli = spawnCli(file);
  try {
    await cli.waitForLog((l) => l.msg === 'switchboard started');
    const port = await cli.port('web');
    await writeFile(
      file,
      `${good}limits: { idleTimeout: soon }\npolicies:\n` +
        `  - { name: deny, use: block, when: 'req_hst_in("x")' }\n` +
        '  - { name: ok, use: block, when: \'req_host_in("y")\' }\n' +
        '  - { name: rate, use: rate-limit, options: { key: client-ip, rate: fast } }\n',
    );
    cli.kill('SIGHUP');
    const failed = await cli.waitForLog((l) => l.msg === 'reload failed; config unchanged');
    expect(failed.errors).toEqual([
      'limits.idleTimeout: expected a duration like 500ms, 2s or 1m, got "soon"',
      'policies[0] (deny): when: column 1: primitive req_hst_in not found (did you mean "req_host_in"?)',
      // every bad rule, not only the first (each compiled alone once the list fails)
      'policies[2] (rate): policies[2].options.rate: expected a rate like 100/s, 6000/m or 5/10s, got "fast"',
    ]);
    const res = await httpGet(port, '/');
    expect(res.status).toBe(200);
  } finally {
    cli.kill('SIGTERM');
    await cli.exited;
    await a.close();
    await rm(rdir, { recursive: true, force: true });
  }
}, 30_000);
