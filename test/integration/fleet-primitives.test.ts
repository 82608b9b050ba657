/**
 * The etcd primitives of the Fleet contract (app/fleet/contract.ts) on a real etcd, as the next
 * steps use them: keys under the prefix (get, put, create-if-absent, delete), watchPrefix (its
 * first load, then each change in order), member-bound keys (gone when the member stops), and
 * lease-bound locks: one holder at a time, a waiter takes the lock when the holder releases it
 * or when the holder's lease runs out (a holder that died), an abort ends a wait.
 */
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetChangeBatch } from '../../app/fleet/contract.ts';
import { EtcdFleet } from '../../app/fleet/fleet.ts';
import { createLogger } from '../../src/base/log.ts';
import type { FleetConfig } from '../../src/config/fleet.ts';
import { etcdBinary, startEtcd, type TestEtcd } from '../harness/etcd.ts';
import { eventually } from '../harness/router.ts';

const facts = () => ({ version: '0.0.0-test', configHash: 'abc', listeners: ['127.0.0.1:1'] });

describe.skipIf(etcdBinary() === undefined)('fleet: the etcd primitives', () => {
  let etcd: TestEtcd;
  let client: Etcd3;
  const fleets: EtcdFleet[] = [];
  let n = 0;

  beforeAll(async () => {
    etcd = await startEtcd();
    client = new Etcd3({ hosts: etcd.endpoint });
  });
  afterAll(async () => {
    for (const f of fleets.splice(0)) await f.close();
    client?.close();
    await etcd?.close();
  });

  const config = (p: string): FleetConfig => ({
    leaseTtl: 2000,
    etcd: { endpoints: [etcd.endpoint], prefix: p, dialTimeout: 1000 },
  });

  async function member(id: string, p: string): Promise<EtcdFleet> {
    const f = await EtcdFleet.start({ config: config(p), dir: '.', id, facts, logger: createLogger('silent') });
    fleets.push(f);
    return f;
  }

  it('get, put, create-if-absent and delete under the prefix', async () => {
    const p = `/prim${++n}/`;
    const f = await member('a', p);
    expect(await f.get('k')).toBeUndefined();
    await f.put('k', 'v1');
    expect((await client.get(`${p}k`).string()) ?? undefined).toBe('v1');
    expect(await f.get('k')).toBe('v1');
    expect(await f.create('k', 'v2')).toBe(false);
    expect(await f.get('k')).toBe('v1');
    expect(await f.create('new', 'v3')).toBe(true);
    await f.delete('k');
    expect(await f.get('k')).toBeUndefined();
    expect(await f.get('new')).toBe('v3');
  });

  it('watchPrefix: the first load, then each change in order; close stops it', async () => {
    const p = `/prim${++n}/`;
    const f = await member('a', p);
    await client.put(`${p}certs/a`).value('1');
    await client.put(`${p}certs/b`).value('2');
    await client.put(`${p}other`).value('x');
    const batches: FleetChangeBatch[] = [];
    const w = await f.watchPrefix('certs/', (b) => batches.push(b));
    expect(batches).toEqual([
      {
        initial: true,
        changes: [
          { kind: 'put', key: 'a', value: '1' },
          { kind: 'put', key: 'b', value: '2' },
        ],
      },
    ]);
    await f.put('certs/c', '3');
    await f.delete('certs/a');
    await eventually(() => batches.length === 3, 10_000, 'two changes');
    expect(batches.slice(1)).toEqual([
      { initial: false, changes: [{ kind: 'put', key: 'c', value: '3' }] },
      { initial: false, changes: [{ kind: 'delete', key: 'a' }] },
    ]);
    expect([...w.entries()]).toEqual([
      ['b', '2'],
      ['c', '3'],
    ]);
    await w.close();
    await f.put('certs/d', '4');
    await f.get('certs/d');
    expect(batches).toHaveLength(3);
  });

  it('a member-bound key lives as long as its member', async () => {
    const p = `/prim${++n}/`;
    const f = await member('a', p);
    await f.put('challenges/t1', 'answer', { lease: 'member' });
    expect(await client.get(`${p}challenges/t1`).string()).toBe('answer');
    await f.close();
    expect(await client.get(`${p}challenges/t1`).string()).toBeNull();
  });

  it('locks: one holder; a waiter takes it on release, or when the holder dies (its lease runs out)', async () => {
    const p = `/prim${++n}/`;
    const a = await member('a', p);
    const b = await member('b', p);
    const held = await a.lock('order/x.test', 2000);
    expect(await client.get(`${p}locks/order/x.test`).string()).toBe('a');
    expect(await b.tryLock('order/x.test', 2000)).toBeUndefined();
    let got = false;
    const waiting = b.lock('order/x.test', 2000).then((l) => {
      got = true;
      return l;
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(got).toBe(false);
    await held.release();
    const second = await waiting;
    expect(await client.get(`${p}locks/order/x.test`).string()).toBe('b');

    // A holder that dies: a lock taken straight on etcd with a lease nobody keeps alive.
    await second.release();
    const lease = client.lease(2, { autoKeepAlive: false });
    await client
      .put(`${p}locks/order/y.test`)
      .value('dead')
      .lease(await lease.grant())
      .exec();
    const t0 = Date.now();
    const taken = await a.lock('order/y.test', 2000);
    expect(Date.now() - t0).toBeGreaterThan(500);
    expect(await client.get(`${p}locks/order/y.test`).string()).toBe('a');
    await taken.release();
    lease.release();

    // An abort ends a wait.
    const third = await b.lock('order/z.test', 2000);
    const abort = new AbortController();
    const waited = a.lock('order/z.test', 2000, { signal: abort.signal });
    abort.abort(new Error('gave up'));
    await expect(waited).rejects.toThrow('gave up');
    await third.release();
  });
});
