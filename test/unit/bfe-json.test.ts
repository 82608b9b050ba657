import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { convertBfe, loadBfeDir } from '../../address-books/bfe/bfe-json.ts';
import { compileRoutingTable } from '../../address-books/bfe/compile.ts';
import { importBfeDir } from '../../address-books/bfe/import-bfe.ts';
import { createRequest } from '../../src/request/request.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests mutate deep plain data freely
type Loose = Record<string, any>;

const FIXTURES = join(import.meta.dirname, '../fixtures/bfe');
const CONF = join(FIXTURES, 'conf');

function req(host: string, path: string, headers: [string, string][] = [], vip?: string) {
  return createRequest({
    protocol: 'http1',
    host,
    path,
    headers,
    vip,
    clientIp: '192.0.2.1',
    clientPort: 40000,
    localIp: '127.0.0.1',
    localPort: 8080,
    listener: 'web',
  });
}

async function twins() {
  const bfe = await loadBfeDir(CONF);
  const yaml = parse(await readFile(join(FIXTURES, 'routes.yaml'), 'utf8'));
  return { bfe, fromJson: compileRoutingTable(bfe.table), fromYaml: compileRoutingTable(yaml) };
}

describe('BFE JSON conf dir (reference bfe.md §3)', () => {
  it('loads to the same routing table as its YAML twin', async () => {
    const { fromJson, fromYaml } = await twins();
    expect(fromJson.table).toEqual(fromYaml.table);
  });

  it('routes every sample request the same way as its YAML twin', async () => {
    const { fromJson, fromYaml } = await twins();
    const requests = [
      req('shop.example.test', '/static/app.js'),
      req('shop.example.test', '/cart'),
      req('a.shop.example.test', '/x', [['X-Canary', '1']]),
      req('b.a.shop.example.test', '/x'),
      req('api.example.test', '/v1/items'),
      req('api.example.test', '/v2/items'),
      req('unknown.test', '/v1', [], '2001:db8::10'),
      req('unknown.test', '/'),
    ];
    const got = requests.map((r) => [fromJson.findAddresses(r)?.cluster, fromJson.findAddresses(r)?.rule]);
    expect(got).toEqual(requests.map((r) => [fromYaml.findAddresses(r)?.cluster, fromYaml.findAddresses(r)?.rule]));
    expect(got.map((g) => g[0])).toEqual(['static', 'web', 'web_canary', 'web', 'api', undefined, 'api', 'web']);
  });

  it('maps BFE fields and defaults onto the cluster policy', async () => {
    const { fromJson } = await twins();
    const api = fromJson.table.clusters.api!;
    expect(api).toMatchObject({
      balance: 'sticky',
      hash: { strategy: 'cookie', key: 'uid' },
      retries: 2,
      crossRetries: 0,
    });
    expect(fromJson.table.clusters.web!).toMatchObject({
      crossRetries: 1,
      healthCheck: { type: 'http', path: '/health', failNum: 3, interval: 2000 },
    });
    expect(fromJson.table.clusters.web_canary!.slowStart).toBe(10_000);
    expect(fromJson.table.clusters.web!.subclusters['web.idc2']!.backends[0]).toEqual({
      address: '[::1]:9003',
      weight: 1,
      name: 'w3',
    });
  });

  it('reports unknown keys as warnings, not errors', async () => {
    const { bfe } = await twins();
    expect(bfe.warnings).toContain('cluster_conf.data: Config.web.Colour: unknown key ignored');
  });

  it('import-bfe prints YAML that loads back to the same table', async () => {
    const { fromJson } = await twins();
    const out = await importBfeDir(CONF);
    expect(out.yaml).toMatch(/^# imported from /);
    expect(compileRoutingTable(parse(out.yaml)).table).toEqual(fromJson.table);
  });

  const docs = async () => {
    const read = async (p: string) => JSON.parse(await readFile(join(CONF, p), 'utf8'));
    return {
      hostRule: await read('server_data_conf/host_rule.data'),
      vipRule: await read('server_data_conf/vip_rule.data'),
      routeRule: await read('server_data_conf/route_rule.data'),
      clusterConf: await read('server_data_conf/cluster_conf.data'),
      gslb: await read('cluster_conf/gslb.data'),
      clusterTable: await read('cluster_conf/cluster_table.data'),
    };
  };
  const errors: readonly [string, (d: Loose) => void, RegExp][] = [
    [
      '§3.1 tag of no product',
      (d) => {
        d.hostRule.Hosts.orphan = ['o.test'];
      },
      /host_rule\.data: Hosts\.orphan: host tag orphan belongs to no product/,
    ],
    [
      '§3.1 default product must exist',
      (d) => {
        d.hostRule.DefaultProduct = 'nope';
      },
      /host_rule\.data: DefaultProduct: product nope/,
    ],
    [
      '§3.1 Version required',
      (d) => {
        delete d.hostRule.Version;
      },
      /host_rule\.data: Version: is required/,
    ],
    [
      '§3.3 no product rule',
      (d) => {
        delete d.routeRule.BasicRule;
        delete d.routeRule.ProductRule;
      },
      /route_rule\.data: no product rule/,
    ],
    [
      '§3.8 route product must be in host_rule',
      (d) => {
        d.routeRule.ProductRule.ghost = [];
      },
      /ProductRule\.ghost: product ghost is not in host_rule\.data/,
    ],
    [
      '§3.3 ClusterName required',
      (d) => {
        delete d.routeRule.ProductRule.shop[0].ClusterName;
      },
      /ProductRule\.shop\[0\]\.ClusterName: is required/,
    ],
    [
      '§3.8 gslb cluster needs cluster_table',
      (d) => {
        delete d.clusterTable.Config.static;
      },
      /clusters\.static: in gslb\.data but not in cluster_table\.data/,
    ],
    [
      '§3.6 backend fields required',
      (d) => {
        delete d.clusterTable.Config.api['api.idc1'][0].Port;
      },
      /Config\.api\.api\.idc1\[0\]\.Port: is required/,
    ],
  ];
  it.each(errors)('%s', async (_name, mutate, message) => {
    const d = await docs();
    mutate(d);
    expect(() => convertBfe(d)).toThrow(message);
  });

  it('§3.5 a cluster missing from gslb.data is left out with a warning', async () => {
    const d = await docs();
    delete d.gslb.Clusters.api;
    delete d.routeRule.ProductRule.api;
    const out = convertBfe(d);
    expect(out.warnings).toContain('gslb.data: clusters.api: in cluster_conf.data but not in gslb.data: left out');
    expect(() => compileRoutingTable(out.table)).not.toThrow();
  });

  it('§3.8 a rule to a cluster without gslb fails the load', async () => {
    const d = await docs();
    delete d.gslb.Clusters.api;
    expect(() => compileRoutingTable(convertBfe(d).table)).toThrow(
      /products\.api\.rules\[0\]\.cluster: cluster api does not exist/,
    );
  });

  it('a missing required file is an error naming it', async () => {
    await expect(loadBfeDir(FIXTURES)).rejects.toThrow(/host_rule\.data: not found/);
  });
});
