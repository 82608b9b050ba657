/**
 * Operator micro-benchmark: `node bench/operators.ts`.
 *
 * 1. For each built-in operator and pool size (10, 100, 1,000 backends, weights 1–4), warm up,
 *    then time batches of `findJack` calls and report the median ns per call.
 * 2. Distribution error: 100,000 picks over 10 backends with weights 1–4 (varied client ip,
 *    header, path), reported as the largest |observed share − expected share| / expected share.
 */
import pino from 'pino';
import { builtinOperators } from '../operators/index.ts';
import { seededRandom } from '../src/base/random.ts';
import { DEFAULT_POLICY } from '../src/config/cluster.ts';
import { type Attempt, type Backend, type Candidates, isRefusal, type Request } from '../src/contracts/types.ts';
import { LocalRegistry } from '../src/registry/local.ts';

const FIRST: Attempt = { number: 1, failed: new Set(), subclusters: [] };
const OPTIONS: Record<string, unknown> = {
  'consistent-hash': { key: 'client-ip', balanceFactor: 1.25, replicas: 160 },
};

function makeRequest(k: number): Request {
  const ip = `10.${(k >>> 16) & 255}.${(k >>> 8) & 255}.${k & 255}`;
  const h = (n: string) => (n.toLowerCase() === 'x-user' ? `u${k}` : undefined);
  return {
    protocol: 'http1',
    host: 'bench.test',
    port: undefined,
    path: `/p/${k}`,
    target: `/p/${k}`,
    query: '',
    method: 'GET',
    header: h,
    headerValues: () => [],
    cookie: () => undefined,
    queryParam: () => undefined,
    sni: undefined,
    alpn: [],
    clientIp: ip,
    clientPort: 1,
    peerIp: ip,
    localIp: '127.0.0.1',
    localPort: 80,
    vip: undefined,
    secure: false,
    trustedClient: false,
    tls: undefined,
    listener: 'bench',
  };
}

function makeCandidates(n: number): Candidates {
  const backends: Backend[] = Array.from({ length: n }, (_, i) => ({
    id: `10.0.${i >> 8}.${i & 255}:80`,
    host: `10.0.${i >> 8}.${i & 255}`,
    port: 80,
    weight: 1 + (i % 4),
    name: `b${i}`,
  }));
  return {
    product: 'p',
    cluster: 'c',
    policy: DEFAULT_POLICY,
    rule: 'bench',
    subclusters: [{ name: 's1', weight: 1, backends }],
  };
}

function makeOperator(name: string) {
  const factory = builtinOperators[name]!;
  const options = factory.options === undefined ? {} : factory.options.parse(OPTIONS[name] ?? {});
  const ctx = {
    configDir: '.',
    registry: new LocalRegistry(),
    logger: pino({ level: 'silent' }),
    random: seededRandom(1),
  };
  return factory.create(options, ctx);
}

function medianNs(name: string, n: number): number {
  const op = makeOperator(name);
  const c = makeCandidates(n);
  const requests = Array.from({ length: 1024 }, (_, k) => makeRequest(k));
  for (let k = 0; k < 5000; k++) op.findJack(requests[k & 1023]!, c, FIRST); // warm-up, builds tables
  const batch = n >= 1000 ? 500 : 5000;
  const samples: number[] = [];
  for (let s = 0; s < 21; s++) {
    const t0 = process.hrtime.bigint();
    for (let k = 0; k < batch; k++) op.findJack(requests[k & 1023]!, c, FIRST);
    samples.push(Number(process.hrtime.bigint() - t0) / batch);
  }
  samples.sort((a, b) => a - b);
  return samples[10]!;
}

function distributionError(name: string): number {
  const op = makeOperator(name);
  const c = makeCandidates(10);
  const backends = c.subclusters[0]!.backends;
  const total = backends.reduce((t, b) => t + b.weight, 0);
  const counts = new Map<string, number>();
  const N = 100_000;
  for (let k = 0; k < N; k++) {
    const r = op.findJack(makeRequest(k), c, FIRST);
    if (isRefusal(r)) throw new Error(`${name}: refused ${r.refused}`);
    counts.set(r.backend.id, (counts.get(r.backend.id) ?? 0) + 1);
  }
  let worst = 0;
  for (const b of backends) {
    const expected = b.weight / total;
    worst = Math.max(worst, Math.abs((counts.get(b.id) ?? 0) / N - expected) / expected);
  }
  return worst;
}

const rows = Object.keys(builtinOperators).map((name) => ({
  operator: name,
  'ns @10': Math.round(medianNs(name, 10)),
  'ns @100': Math.round(medianNs(name, 100)),
  'ns @1000': Math.round(medianNs(name, 1000)),
  'max share error': `${(distributionError(name) * 100).toFixed(2)} %`,
}));
console.table(rows);
