/**
 * BFE's cluster files → the routing table's `clusters` (reference bfe.md §3.4–3.6):
 *
 * 1. `cluster_conf.data` gives each cluster's policy (GslbBasic → balance, hash, retries;
 *    BackendConf.SlowStartTime; CheckConf → healthCheck);
 * 2. `gslb.data` gives each cluster's sub-clusters and their weights;
 * 3. `cluster_table.data` gives each sub-cluster's backends (`Addr:Port`, Weight, Name).
 *
 * A cluster without a gslb entry cannot be balanced and is left out (with a warning); a gslb
 * cluster without a cluster_table entry is an error, because Switchboard reloads all or nothing.
 */
import { formatHostPort } from '../../src/config/address.ts';
import { BLACKHOLE } from '../../src/contracts/types.ts';
import { type BfeReader, type Fields, join } from './bfe-json-reader.ts';

type Json = Record<string, unknown>;

const SECTIONS = ['BackendConf', 'CheckConf', 'GslbBasic', 'ClusterBasic', 'HTTPSConf', 'AIConf'] as const;
const BACKEND_CONF = [
  'Protocol',
  'TimeoutConnSrv',
  'TimeoutResponseHeader',
  'MaxIdleConnsPerHost',
  'MaxConnsPerHost',
  'RetryLevel',
  'SlowStartTime',
  'OutlierDetectionHttpCode',
  'FCGIConf',
];
const CHECK_CONF = [
  'Schem',
  'Uri',
  'Host',
  'HostType',
  'StatusCode',
  'StatusCodeRange',
  'FailNum',
  'SuccNum',
  'CheckInterval',
  'CheckTimeout',
];
const GSLB_BASIC = ['CrossRetry', 'RetryMax', 'BalanceMode', 'HashConf', 'EPPAddr'];
const HASH_CONF = ['HashStrategy', 'HashHeader', 'SessionSticky'];
const CLUSTER_BASIC = [
  'TimeoutReadClient',
  'TimeoutWriteClient',
  'TimeoutReadClientAgain',
  'ReqWriteBufferSize',
  'ReqFlushInterval',
  'ResFlushInterval',
  'CancelOnClientClose',
  'DisableHostHeader',
  'DisableHealthCheck',
];

function section(r: BfeReader, conf: Fields, name: string, where: string, known: readonly string[]): Fields {
  const v = conf[name];
  if (v === undefined || v === null) return {};
  return r.fields(v, join(where, name), known) ?? {};
}

function hashOf(r: BfeReader, h: Fields, where: string): Json | undefined {
  const strategy = r.int(h.HashStrategy, join(where, 'HashStrategy'), false) ?? 1;
  const header = r.string(h.HashHeader, join(where, 'HashHeader'), false) ?? '';
  if (strategy === 1) return undefined;
  if (strategy === 3) return { strategy: 'uri' };
  if (strategy !== 0 && strategy !== 2) {
    r.error(join(where, 'HashStrategy'), `expected 0, 1, 2 or 3, got ${strategy}`);
    return undefined;
  }
  if (header === '') {
    r.error(join(where, 'HashHeader'), `is required for HashStrategy ${strategy}`);
    return undefined;
  }
  if (strategy === 2) r.warn(join(where, 'HashStrategy'), 'ClientIdPreferred is mapped to the id alone');
  const cookie = /^cookie:(.+)$/i.exec(header);
  return cookie === null ? { strategy: 'header', key: header } : { strategy: 'cookie', key: cookie[1]! };
}

function healthOf(r: BfeReader, c: Fields, where: string): Json {
  const out: Json = {};
  const schem = (r.string(c.Schem, join(where, 'Schem'), false) ?? 'http').toLowerCase();
  if (schem === 'https' || schem === 'tls') r.warn(join(where, 'Schem'), `${schem} checks are done as tcp connects`);
  else if (schem !== 'http' && schem !== 'tcp')
    r.error(join(where, 'Schem'), `expected http, https, tcp or tls, got ${schem}`);
  out.type = schem === 'http' ? 'http' : 'tcp';
  out.path = r.string(c.Uri, join(where, 'Uri'), false) ?? '/health_check';
  const host = r.string(c.Host, join(where, 'Host'), false);
  if (host !== undefined && host !== '') out.host = host;
  const code = r.int(c.StatusCode, join(where, 'StatusCode'), false);
  if (code !== undefined && code >= 100 && code <= 599) out.statusCode = code;
  else if (code !== undefined && code !== 0)
    r.warn(join(where, 'StatusCode'), `status class mask ${code} not supported, expecting 200`);
  const keys = [
    ['FailNum', 'failNum'],
    ['SuccNum', 'succNum'],
    ['CheckInterval', 'interval'],
    ['CheckTimeout', 'timeout'],
  ] as const;
  for (const [bfe, ours] of keys) {
    const v = r.int(c[bfe], join(where, bfe), false);
    if (v !== undefined) out[ours] = v;
  }
  return out;
}

function policyOf(r: BfeReader, conf: Fields, where: string): Json {
  const backend = section(r, conf, 'BackendConf', where, BACKEND_CONF);
  const check = section(r, conf, 'CheckConf', where, CHECK_CONF);
  const gslb = section(r, conf, 'GslbBasic', where, GSLB_BASIC);
  section(r, conf, 'ClusterBasic', where, CLUSTER_BASIC);
  const gWhere = join(where, 'GslbBasic');
  const hashConf =
    gslb.HashConf === undefined || gslb.HashConf === null
      ? {}
      : (r.fields(gslb.HashConf, join(gWhere, 'HashConf'), HASH_CONF) ?? {});
  const out: Json = {};
  const mode = (r.string(gslb.BalanceMode, join(gWhere, 'BalanceMode'), false) ?? 'WRR').toUpperCase();
  if (mode === 'WLC') out.balance = 'wlc';
  else if (mode !== 'WRR') r.warn(join(gWhere, 'BalanceMode'), `${mode} is not supported, using WRR`);
  if (r.bool(hashConf.SessionSticky, join(gWhere, 'HashConf.SessionSticky')) === true) out.balance = 'sticky';
  const hash = hashOf(r, hashConf, join(gWhere, 'HashConf'));
  if (hash !== undefined) out.hash = hash;
  out.retries = r.int(gslb.RetryMax, join(gWhere, 'RetryMax'), false) ?? 2;
  out.crossRetries = r.int(gslb.CrossRetry, join(gWhere, 'CrossRetry'), false) ?? 0;
  const slow = r.int(backend.SlowStartTime, join(where, 'BackendConf.SlowStartTime'), false);
  if (slow !== undefined && slow > 0) out.slowStart = slow * 1000;
  const protocol = (r.string(backend.Protocol, join(where, 'BackendConf.Protocol'), false) ?? 'http').toLowerCase();
  if (protocol !== 'http' && protocol !== 'tcp' && protocol !== 'h2c' && protocol !== 'ws') {
    r.warn(
      join(where, 'BackendConf.Protocol'),
      `${protocol}: bytes are spliced unchanged, the backend protocol is not translated`,
    );
  }
  out.healthCheck = healthOf(r, check, join(where, 'CheckConf'));
  return out;
}

/** `cluster_conf.data` → cluster name → policy (input form). */
export function readClusterConf(r: BfeReader, doc: unknown): Map<string, Json> {
  const out = new Map<string, Json>();
  const top = r.fields(doc, '', ['Version', 'Config']);
  if (top === undefined) return out;
  r.string(top.Version, 'Version', true);
  const config = r.map(top.Config, 'Config', true) ?? {};
  for (const [name, raw] of Object.entries(config)) {
    const where = `Config.${name}`;
    const conf = r.fields(raw, where, SECTIONS);
    if (conf !== undefined) out.set(name, policyOf(r, conf, where));
  }
  return out;
}

/** `gslb.data` → cluster → sub-cluster → weight (negative weights dropped with a warning). */
export function readGslb(r: BfeReader, doc: unknown): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  const top = r.fields(doc, '', ['Hostname', 'Ts', 'Clusters']);
  if (top === undefined) return out;
  r.string(top.Hostname, 'Hostname', true);
  r.string(top.Ts, 'Ts', true);
  for (const [cluster, subs] of Object.entries(r.map(top.Clusters, 'Clusters', true) ?? {})) {
    const weights = new Map<string, number>();
    for (const [sub, w] of Object.entries(r.map(subs, `Clusters.${cluster}`, true) ?? {})) {
      const weight = r.int(w, `Clusters.${cluster}.${sub}`, true);
      if (weight !== undefined && weight < 0)
        r.warn(`Clusters.${cluster}.${sub}`, 'negative weight: sub-cluster left out');
      else if (weight !== undefined) weights.set(sub, weight);
    }
    out.set(cluster, weights);
  }
  return out;
}

/** `cluster_table.data` → cluster → sub-cluster → backends (input form). */
export function readClusterTable(r: BfeReader, doc: unknown): Map<string, Map<string, Json[]>> {
  const out = new Map<string, Map<string, Json[]>>();
  const top = r.fields(doc, '', ['Version', 'Config']);
  if (top === undefined) return out;
  r.string(top.Version, 'Version', true);
  for (const [cluster, subs] of Object.entries(r.map(top.Config, 'Config', true) ?? {})) {
    const table = new Map<string, Json[]>();
    for (const [sub, list] of Object.entries(r.map(subs, `Config.${cluster}`, true) ?? {})) {
      const backends: Json[] = [];
      (r.list(list, `Config.${cluster}.${sub}`, true) ?? []).forEach((raw, i) => {
        const where = `Config.${cluster}.${sub}[${i}]`;
        const f = r.fields(raw, where, ['Name', 'Addr', 'Port', 'Weight']);
        if (f === undefined) return;
        const name = r.string(f.Name, join(where, 'Name'), true);
        const addr = r.string(f.Addr, join(where, 'Addr'), true);
        const port = r.int(f.Port, join(where, 'Port'), true);
        const weight = r.int(f.Weight, join(where, 'Weight'), true);
        if (addr === undefined || port === undefined || weight === undefined) return;
        const b: Json = { address: formatHostPort(addr, port), weight: Math.max(weight, 0) };
        if (name !== undefined && name !== '') b.name = name;
        backends.push(b);
      });
      table.set(sub, backends);
    }
    out.set(cluster, table);
  }
  return out;
}

/** Joins the three files into the table's `clusters` (input form). */
export function joinClusters(
  r: BfeReader,
  policies: Map<string, Json>,
  gslb: Map<string, Map<string, number>>,
  table: Map<string, Map<string, Json[]>>,
): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const name of policies.keys()) {
    if (!gslb.has(name)) r.warn(`clusters.${name}`, 'in cluster_conf.data but not in gslb.data: left out');
  }
  for (const name of table.keys()) {
    if (!gslb.has(name)) r.warn(`clusters.${name}`, 'in cluster_table.data but not in gslb.data: ignored');
  }
  for (const [name, weights] of gslb) {
    const backends = table.get(name);
    if (backends === undefined) {
      r.error(`clusters.${name}`, 'in gslb.data but not in cluster_table.data');
      continue;
    }
    const policy = policies.get(name);
    if (policy === undefined) r.warn(`clusters.${name}`, 'in gslb.data but not in cluster_conf.data: default policy');
    const subclusters: Record<string, Json> = {};
    for (const [sub, weight] of weights) {
      subclusters[sub] = { weight, backends: sub === BLACKHOLE ? [] : (backends.get(sub) ?? []) };
    }
    out[name] = { ...(policy ?? {}), subclusters };
  }
  return out;
}
