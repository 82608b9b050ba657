/**
 * The operator conformance suite (STYLE §17): every operator's test file calls
 * `operatorConformance(label, make)`. It checks the contract every operator shares:
 *
 * 1. no backends → `no_backend`; a cluster sent to GSLB_BLACKHOLE → `blackhole`;
 * 2. never an excluded (`attempt.failed`) or down backend while another is available;
 * 3. the weight distribution over 10,000 picks (varied client ip, header, cookie, path);
 * 4. picks are synchronous; candidates are not mutated (deep-frozen, compared after);
 * 5. a new snapshot (a different Candidates object for the same cluster) is picked up.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/base/random.ts';
import { DEFAULT_POLICY } from '../../src/config/cluster.ts';
import type { OperatorInstance, PluginContext } from '../../src/contracts/plugin.ts';
import {
  type Attempt,
  type Backend,
  BLACKHOLE,
  type Candidates,
  type ClusterPolicy,
  isRefusal,
  type Jack,
  type Refusal,
  type Request,
  type SubCluster,
} from '../../src/contracts/types.ts';
import { LocalRegistry } from '../../src/registry/local.ts';

/** A plugin context with a fresh registry, a seeded random source and a silent logger. */
export function testContext(seed = 1, now?: () => number): PluginContext {
  return {
    configDir: '.',
    registry: new LocalRegistry(now),
    logger: pino({ level: 'silent' }),
    random: seededRandom(seed),
  };
}

/** A backend `127.0.0.1:port`. */
export function backend(port: number, weight = 1, host = '127.0.0.1'): Backend {
  return { id: `${host}:${port}`, host, port, weight, name: `b${port}` };
}

/** Candidates of cluster `cluster` with the given sub-clusters (policy defaults overridable). */
export function candidates(
  subclusters: readonly SubCluster[],
  policy: Partial<ClusterPolicy> = {},
  cluster = 'web',
): Candidates {
  return { product: 'p', cluster, policy: { ...DEFAULT_POLICY, ...policy }, subclusters, rule: 'test' };
}

/** One sub-cluster. */
export function sub(name: string, weight: number, backends: readonly Backend[]): SubCluster {
  return { name, weight, backends };
}

/** The first attempt. */
export const FIRST: Attempt = Object.freeze({ number: 1, failed: new Set<string>(), subclusters: [] });

/** Fields of a fake request; everything else defaults. */
export interface RequestFields {
  clientIp?: string;
  host?: string;
  path?: string;
  headers?: Record<string, string>;
  cookies?: Record<string, string>;
}

/** A frozen Request with the given fields (headers are case-insensitive). */
export function request(f: RequestFields = {}): Request {
  const headers = new Map(Object.entries(f.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  const cookies = new Map(Object.entries(f.cookies ?? {}));
  const path = f.path ?? '/';
  return Object.freeze({
    protocol: 'http1',
    host: f.host ?? 'www.example.test',
    port: undefined,
    path,
    target: path,
    query: '',
    method: 'GET',
    header: (n: string) => headers.get(n.toLowerCase()),
    headerValues: (n: string) => {
      const v = headers.get(n.toLowerCase());
      return v === undefined ? [] : [v];
    },
    cookie: (n: string) => cookies.get(n),
    queryParam: () => undefined,
    sni: undefined,
    alpn: [],
    clientIp: f.clientIp ?? '192.0.2.1',
    clientPort: 40000,
    peerIp: f.clientIp ?? '192.0.2.1',
    localIp: '127.0.0.1',
    localPort: 8080,
    vip: undefined,
    secure: false,
    trustedClient: false,
    tls: undefined,
    listener: 'web',
  } satisfies Request);
}

/** The k-th of many distinct requests (ip, header X-User, cookie sid, path and host all vary). */
export function variedRequest(k: number): Request {
  const v = `u${k}`;
  return request({
    clientIp: `10.${(k >>> 16) & 255}.${(k >>> 8) & 255}.${k & 255}`,
    host: `h${k}.example.test`,
    path: `/p/${k}`,
    headers: { 'X-User': v },
    cookies: { sid: v },
  });
}

/** Asserts a jack and returns it. */
export function jackOf(r: Jack | Refusal): Jack {
  if (isRefusal(r)) throw new Error(`expected a jack, got refusal ${r.refused}`);
  return r;
}

function deepFreeze<T>(o: T): T {
  if (o !== null && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}

/** Runs the shared operator contract against `make`. */
export function operatorConformance(label: string, make: (ctx: PluginContext) => OperatorInstance): void {
  describe(`operator conformance: ${label}`, () => {
    it('refuses no_backend when there are no backends', () => {
      const op = make(testContext());
      expect(op.findJack(request(), candidates([]), FIRST)).toEqual({ refused: 'no_backend' });
      expect(op.findJack(request(), candidates([sub('s1', 1, [])]), FIRST)).toEqual({ refused: 'no_backend' });
    });

    it('refuses blackhole when GSLB lands on GSLB_BLACKHOLE', () => {
      const op = make(testContext());
      const c = candidates([sub(BLACKHOLE, 1, []), sub('s1', 0, [backend(9001)])]);
      expect(op.findJack(request(), c, FIRST)).toEqual({ refused: 'blackhole' });
    });

    it('never returns an excluded or down backend while another is available', () => {
      const ctx = testContext();
      const op = make(ctx);
      const bs = [backend(9001, 3), backend(9002, 1), backend(9003, 2), backend(9004, 1)];
      const c = candidates([sub('s1', 1, bs)]);
      ctx.registry.setAvailable('127.0.0.1:9001', false);
      const attempt: Attempt = { number: 2, failed: new Set(['127.0.0.1:9003']), subclusters: ['s1'] };
      for (let k = 0; k < 500; k++) {
        const id = jackOf(op.findJack(variedRequest(k), c, attempt)).backend.id;
        expect(['127.0.0.1:9002', '127.0.0.1:9004']).toContain(id);
      }
      ctx.registry.setAvailable('127.0.0.1:9002', false);
      ctx.registry.setAvailable('127.0.0.1:9004', false);
      // Only the failed one is left up: repeating it beats refusing.
      expect(jackOf(op.findJack(request(), c, attempt)).backend.id).toBe('127.0.0.1:9003');
      ctx.registry.setAvailable('127.0.0.1:9003', false);
      expect(op.findJack(request(), c, attempt)).toEqual({ refused: 'no_backend' });
    });

    it('follows the weights over 10,000 picks', () => {
      const op = make(testContext(7));
      const weights = [1, 2, 3, 4];
      const bs = weights.map((w, i) => backend(9001 + i, w));
      const c = candidates([sub('s1', 1, bs)]);
      const counts = new Map<string, number>();
      const N = 10_000;
      for (let k = 0; k < N; k++) {
        const id = jackOf(op.findJack(variedRequest(k), c, FIRST)).backend.id;
        counts.set(id, (counts.get(id) ?? 0) + 1);
      }
      weights.forEach((w, i) => {
        const share = (counts.get(bs[i]!.id) ?? 0) / N;
        expect(Math.abs(share - w / 10), `share of weight ${w}`).toBeLessThan(0.04);
      });
    });

    it('picks synchronously and does not mutate candidates', () => {
      const op = make(testContext());
      const c = deepFreeze(candidates([sub('s2', 1, [backend(9002)]), sub('s1', 3, [backend(9001), backend(9003)])]));
      const before = JSON.stringify(c);
      for (let k = 0; k < 50; k++) {
        const r = op.findJack(variedRequest(k), c, FIRST);
        expect(typeof (r as unknown as { then?: unknown }).then).toBe('undefined');
        expect(isRefusal(r)).toBe(false);
      }
      expect(JSON.stringify(c)).toBe(before);
    });

    it('picks up a new snapshot of the same cluster', () => {
      const op = make(testContext());
      const v1 = candidates([sub('s1', 1, [backend(9001), backend(9002)])]);
      for (let k = 0; k < 20; k++) op.findJack(variedRequest(k), v1, FIRST);
      const v2 = candidates([sub('s1', 1, [backend(9005), backend(9006)])]);
      for (let k = 0; k < 100; k++) {
        const id = jackOf(op.findJack(variedRequest(k), v2, FIRST)).backend.id;
        expect(['127.0.0.1:9005', '127.0.0.1:9006']).toContain(id);
      }
    });
  });
}
