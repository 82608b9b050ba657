/**
 * The `panel:` key (src/panel/capabilities.ts, app/load-config.ts): a panel is a plugin with an options
 * schema, a misspelt one is a config error listing the known panels, the CLI overrides still
 * apply, and a panel refuses at load what it cannot honour (panels/http2/validate.ts).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type ConfigOverrides, validateConfig } from '../../app/load-config.ts';
import { runCheck } from '../../cli/check.ts';
import type { ConfigError } from '../../src/config/errors.ts';
import { h2cModeOf } from '../../src/config/schema.ts';

const BASE = {
  listeners: [{ name: 'web', address: '127.0.0.1:0' }],
  addressBook: {
    name: 'bfe',
    products: { p: { hosts: ['*'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
    clusters: { c: { subclusters: { s1: { weight: 1, backends: [{ address: '127.0.0.1:9' }] } } } },
  },
};

function load(extra: Record<string, unknown>, overrides: ConfigOverrides = {}) {
  return validateConfig({ ...BASE, ...extra }, '/tmp/switchboard.yaml', '', overrides);
}

async function errorsOf(extra: Record<string, unknown>, overrides: ConfigOverrides = {}): Promise<string[]> {
  try {
    await load(extra, overrides);
  } catch (e) {
    expect((e as ConfigError).code).toBe('SWB_ERR_CONFIG');
    return [...(e as ConfigError).errors];
  }
  return [];
}

describe('panel: a plugin with an options schema', () => {
  it('both spellings load; worker options get their defaults', async () => {
    expect((await load({})).config.panel).toEqual({ name: 'net' });
    expect((await load({ panel: 'http2' })).panel.factory.name).toBe('http2');
    const worker = await load({ panel: { name: 'worker', threads: 2 } });
    expect(worker.config.panel).toEqual({ name: 'worker', threads: 2, engine: 'net' });
    expect(worker.panel.options).toEqual({ threads: 2, engine: 'net' });
  });

  it.each([
    [{ panel: 'htpp2' }, {}, 'panel.name: unknown panel "htpp2" (did you mean "http2"?); known: net, http2, worker'],
    [{}, { panel: 'foo' }, 'panel.name: unknown panel "foo"; known: net, http2, worker'],
    [{ panel: { name: 'worker', engine: 'h2' } }, {}, 'panel.engine: '],
    [{ panel: { name: 'worker', treads: 2 } }, {}, 'panel.treads: unknown key (did you mean "threads"?)'],
    [{ panel: { name: 'net', threads: 2 } }, {}, 'panel.threads: unknown key (net takes no options)'],
  ])('%j with overrides %j → %s', async (extra, overrides, error) => {
    const errors = await errorsOf(extra, overrides);
    expect(errors.some((e) => e.startsWith(error))).toBe(true);
  });

  it('CLI overrides: --panel and --workers apply; another panel drops the file panel options', async () => {
    const w = await load({}, { panel: 'worker', workers: 3 });
    expect(w.config.panel).toEqual({ name: 'worker', threads: 3, engine: 'net' });
    const n = await load({ panel: { name: 'worker', threads: 4, engine: 'http2' } }, { panel: 'net' });
    expect(n.config.panel).toEqual({ name: 'net' });
    const t = await load({ panel: { name: 'worker', engine: 'http2' } }, { workers: 2 });
    expect(t.config.panel).toEqual({ name: 'worker', threads: 2, engine: 'http2' });
  });
});

describe('panel refusals at config load', () => {
  const refusals: [string, Record<string, unknown>, string][] = [
    [
      'tls passthrough',
      { listeners: [{ name: 'pt', address: '127.0.0.1:0', tls: 'passthrough' }] },
      'listeners[0].tls: passthrough is not supported by panel http2 (it terminates HTTP/2; use panel net)',
    ],
    [
      'allowConnect',
      { listeners: [{ name: 'web', address: '127.0.0.1:0', allowConnect: true }] },
      'listeners[0].allowConnect: CONNECT tunnels are not supported by panel http2',
    ],
    [
      'routing per-connection',
      { routing: 'per-connection' },
      'routing: per-connection is not supported by panel http2',
    ],
    [
      'log.accessMode per-connection',
      { log: { accessMode: 'per-connection' } },
      'log.accessMode: per-connection is not supported by panel http2',
    ],
    [
      'maxConnectionLifetime',
      { limits: { maxConnectionLifetime: '1m' } },
      'limits.maxConnectionLifetime: is not supported by panel http2',
    ],
  ];

  it.each(refusals)('http2 refuses %s; net accepts it', async (_name, extra, error) => {
    expect(await errorsOf({ ...extra, panel: 'http2' })).toContainEqual(expect.stringContaining(error));
    expect(await errorsOf({ ...extra, panel: 'net' })).toEqual([]);
  });

  it('the worker panel refuses what its engine refuses, naming both', async () => {
    const extra = { listeners: [{ name: 'pt', address: '127.0.0.1:0', tls: 'passthrough' }] };
    expect(await errorsOf({ ...extra, panel: { name: 'worker', engine: 'http2' } })).toEqual([
      'listeners[0].tls: passthrough is not supported by panel worker with engine http2 (it terminates HTTP/2; use engine net)',
    ]);
    expect(await errorsOf({ ...extra, panel: { name: 'worker', engine: 'net' } })).toEqual([]);
    // --panel http2 on a passthrough config is refused too.
    expect(await errorsOf(extra, { panel: 'http2' })).toHaveLength(1);
  });
});

describe('switchboard check', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'swb-panel-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  async function check(panel: string): Promise<{ code: number; err: string }> {
    const file = join(dir, `${panel}.yaml`);
    await writeFile(
      file,
      `panel: ${panel}\nlisteners: [{ name: pt, address: 127.0.0.1:0, tls: passthrough }]\naddressBook: ${JSON.stringify(BASE.addressBook)}\n`,
    );
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      const code = await runCheck(file);
      return { code, err: err.mock.calls.map((c) => String(c[0])).join('') };
    } finally {
      err.mockRestore();
      out.mockRestore();
    }
  }

  it('a misspelt panel fails check with the known panels; what http2 cannot honour fails too', async () => {
    const typo = await check('htpp2');
    expect(typo.code).toBe(3);
    expect(typo.err).toContain('panel.name: unknown panel "htpp2" (did you mean "http2"?); known: net, http2, worker');
    const http2 = await check('http2');
    expect(http2.code).toBe(3);
    expect(http2.err).toContain('listeners[0].tls: passthrough is not supported by panel http2');
    expect((await check('net')).code).toBe(0);
  });
});

describe('listeners[].h2c (issue 17 item 5)', () => {
  it('defaults to route per-request and allow per-connection; refuse loads on every panel; anything else is a config error naming the path', async () => {
    const unset = await load({});
    expect(h2cModeOf(unset.config.listeners[0]!, unset.config)).toBe('route');
    const perConnection = await load({ routing: 'per-connection' });
    expect(h2cModeOf(perConnection.config.listeners[0]!, perConnection.config)).toBe('allow');
    for (const h2c of ['allow', 'route']) {
      const set = await load({ listeners: [{ name: 'web', address: '127.0.0.1:0', h2c }] });
      expect(h2cModeOf(set.config.listeners[0]!, set.config)).toBe(h2c);
    }
    const refuse = { listeners: [{ name: 'web', address: '127.0.0.1:0', h2c: 'refuse' }] };
    for (const panel of ['net', 'http2', { name: 'worker', threads: 2, engine: 'http2' }]) {
      expect((await load({ ...refuse, panel })).config.listeners[0]?.h2c).toBe('refuse');
    }
    const errors = await errorsOf({ listeners: [{ name: 'web', address: '127.0.0.1:0', h2c: 'deny' }] });
    expect(errors.some((e) => e.startsWith('listeners[0].h2c: '))).toBe(true);
  });
});
