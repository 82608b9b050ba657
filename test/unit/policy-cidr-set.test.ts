/**
 * The address list of `block` (policies/lib/cidr-set.ts, cidr-list.ts): the sorted-range lookup
 * agrees with a naive scan of every block on random lists and addresses (v4, v6, mapped v4,
 * nested and overlapping blocks), a bad line names file:line, and a long list (IPv4 or IPv6) is
 * parsed and sorted in slices that let the event loop run in between.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { CidrListError, cidrSetOf, loadCidrFile, parseCidrList } from '../../policies/lib/cidr-list.ts';
import { CidrSetBuilder } from '../../policies/lib/cidr-set.ts';
import { TimeSlices } from '../../policies/lib/time-slices.ts';
import { cidrContains, parseCidr } from '../../src/base/ip.ts';

const dir = mkdtempSync(join(tmpdir(), 'swb-cidr-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const v4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((o) => o.join('.'));
// Few distinct high groups, so blocks nest, overlap and hit the probes often.
const v6 = fc
  .tuple(fc.constantFrom('2001:db8', '2001:db9', 'fe80:0'), fc.nat(3), fc.nat(0xffff), fc.nat(0xffff))
  .map(([hi, a, b, c]) => `${hi}:${a}:${b.toString(16)}::${c.toString(16)}`);
const block = fc.oneof(
  v4,
  fc.tuple(v4, fc.integer({ min: 0, max: 32 })).map(([a, p]) => `${a}/${p}`),
  fc.tuple(v4, fc.integer({ min: 8, max: 32 })).map(([a, p]) => `${a}/${p}`),
  v6,
  fc.tuple(v6, fc.integer({ min: 16, max: 128 })).map(([a, p]) => `${a}/${p}`),
);
const probe = fc.oneof(
  v4,
  v6,
  v4.map((a) => `::ffff:${a}`),
  fc.constant('not-an-ip'),
);

describe('CidrSet', () => {
  it('agrees with a naive scan of every block (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.array(block, { maxLength: 60 }),
        fc.array(probe, { minLength: 1, maxLength: 40 }),
        (blocks, ips) => {
          const set = cidrSetOf(blocks, 'inline');
          const parsed = blocks.map((b) => parseCidr(b));
          for (const ip of ips) {
            const naive = parsed.some((c) => c !== undefined && cidrContains(c, ip));
            expect(set.has(ip), `${ip} in ${blocks.join(' ')}`).toBe(naive);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a list file reads every entry as the inline list does (fast-check; 2001:db8::/32 once failed in files)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(block, fc.constantFrom('010.0.0.1', '2001:db8::/32', '256.1.1.1', '1.2.3.4/33')), {
          maxLength: 30,
        }),
        fc.array(probe, { minLength: 1, maxLength: 20 }),
        async (blocks, ips) => {
          let inline: ReturnType<typeof cidrSetOf> | undefined;
          try {
            inline = cidrSetOf(blocks, 'inline');
          } catch {
            inline = undefined;
          }
          const file = await parseCidrList(blocks.join('\n'), 'f.txt').catch(() => undefined);
          expect(file === undefined, blocks.join(' ')).toBe(inline === undefined);
          for (const ip of ips) expect(file?.has(ip), ip).toBe(inline?.has(ip));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('probes next to the edges of blocks: first, last, one before, one after', () => {
    const set = cidrSetOf(['10.0.0.0/8', '10.1.0.0/16', '192.0.2.128/25', '2001:db8::/48', '::/128'], 'inline');
    expect(
      ['10.0.0.0', '10.255.255.255', '192.0.2.128', '192.0.2.255', '2001:db8:0:ffff::1', '::'].map((ip) => set.has(ip)),
    ).toEqual([true, true, true, true, true, true]);
    expect(
      ['9.255.255.255', '11.0.0.0', '192.0.2.127', '192.0.3.0', '2001:db8:1::', '::1'].map((ip) => set.has(ip)),
    ).toEqual([false, false, false, false, false, false]);
    expect(set.size).toBe(4); // 10.1.0.0/16 merged into 10.0.0.0/8
  });

  it('families never mix: ::/0 holds no IPv4 address, 0.0.0.0/0 no IPv6 one', () => {
    expect(cidrSetOf(['::/0'], 'x').has('192.0.2.1')).toBe(false);
    expect(cidrSetOf(['::/0'], 'x').has('::ffff:192.0.2.1')).toBe(false);
    expect(cidrSetOf(['0.0.0.0/0'], 'x').has('2001:db8::1')).toBe(false);
    expect(cidrSetOf(['0.0.0.0/0'], 'x').has('::ffff:192.0.2.1')).toBe(true);
  });
});

describe('list files', () => {
  it('a bad line is a CidrListError naming file:line; comments and blanks count as lines', async () => {
    const file = join(dir, 'deny.txt');
    writeFileSync(file, '# list\n10.0.0.0/8\n\n  192.0.2.1  # host\n192.0.2.300\n');
    const err = await loadCidrFile(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CidrListError);
    expect((err as CidrListError).code).toBe('SWB_ERR_CONFIG');
    expect((err as CidrListError).line).toBe(5);
    expect((err as Error).message).toBe(
      `${file}:5: bad address or CIDR "192.0.2.300" (expected 10.0.0.0/8, 192.0.2.1 or 2001:db8::/32)`,
    );
  });

  it('a missing file is the safe-file error naming the path', async () => {
    await expect(loadCidrFile(join(dir, 'none.txt'))).rejects.toThrow(`file not found: ${join(dir, 'none.txt')}`);
  });

  it('a long list is parsed in slices: timers run while it loads', async () => {
    const lines = Array.from({ length: 200_000 }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}/32`);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const set = await parseCidrList(lines.join('\n'), 'big.txt');
    clearInterval(timer);
    expect(set.has('10.3.13.63')).toBe(true);
    expect(set.has('10.4.0.0')).toBe(false);
    expect(ticks).toBeGreaterThan(0);
  });

  it('the sliced build gives exactly the range tables of the build at once (IPv4 and IPv6 shuffled, nested, over several runs)', async () => {
    // 70,000 entries of each family: over four runs of 16,384, so runs are merged in three passes.
    const entries: string[] = [];
    for (let i = 0; i < 70_000; i++) {
      const j = (i * 7919) % 70_000;
      const v4Prefix = j % 5 === 0 ? 24 : j % 7 === 0 ? 30 : 32;
      entries.push(`10.${(j >> 10) & 255}.${(j >> 2) & 255}.${(j & 3) * 64}/${v4Prefix}`);
      entries.push(
        j % 3 === 0
          ? `2001:db8:${(j >> 4).toString(16)}::/48`
          : `2001:db8:${(j >> 4).toString(16)}:${(j & 15).toString(16)}::/64`,
      );
    }
    const atOnce = new CidrSetBuilder();
    const sliced = new CidrSetBuilder();
    for (const e of entries) {
      expect(atOnce.add(e), e).toBe(true);
      sliced.add(e);
    }
    const a = atOnce.build().tables();
    const b = (await sliced.buildInSlices(new TimeSlices(1))).tables();
    expect(a.v4Starts.length).toBeGreaterThan(1000);
    expect(a.v6Starts.length).toBeGreaterThan(1000);
    expect(Buffer.from(b.v4Starts.buffer).equals(Buffer.from(a.v4Starts.buffer))).toBe(true);
    expect(Buffer.from(b.v4Ends.buffer).equals(Buffer.from(a.v4Ends.buffer))).toBe(true);
    expect(Buffer.from(b.v6Starts.buffer).equals(Buffer.from(a.v6Starts.buffer))).toBe(true);
    expect(Buffer.from(b.v6Ends.buffer).equals(Buffer.from(a.v6Ends.buffer))).toBe(true);
    // Ascending and disjoint.
    for (let i = 1; i < a.v4Starts.length; i++)
      expect((a.v4Starts[i] as number) > (a.v4Ends[i - 1] as number)).toBe(true);
  });

  it('a long IPv6 list is sorted in slices too, and agrees with the list built at once', async () => {
    // Shuffled so the runs are not sorted already; nested /48s and /64s so merges happen.
    const lines = Array.from({ length: 120_000 }, (_, i) => {
      const j = (i * 7919) % 120_000;
      return j % 3 === 0
        ? `2001:db8:${(j >> 4).toString(16)}::/48`
        : `2001:db8:${(j >> 4).toString(16)}:${(j & 15).toString(16)}::/64`;
    });
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const sliced = await parseCidrList(lines.join('\n'), 'big6.txt');
    clearInterval(timer);
    const atOnce = cidrSetOf(lines, 'inline');
    for (const ip of [
      '2001:db8:0::1',
      '2001:db8:1d4c:f::1',
      '2001:db8:1d4c:1f::1',
      '2001:db8:2000::1',
      '2001:db9::1',
    ]) {
      expect(sliced.has(ip), ip).toBe(atOnce.has(ip));
    }
    expect(sliced.has('2001:db8:3::1')).toBe(true); // j = 48: a /48
    expect(sliced.has('2001:db9::1')).toBe(false);
    expect(ticks).toBeGreaterThan(0);
  });

  it('a list file of 256 KiB or more is parsed in a worker thread: the same set, file:line errors, the loop free', async () => {
    const lines = Array.from({ length: 40_000 }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}/32`);
    lines.push('2001:db8::/32', '# a comment', '');
    const file = join(dir, 'worker.txt');
    writeFileSync(file, lines.join('\n'));
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const set = await loadCidrFile(file);
    clearInterval(timer);
    expect(ticks).toBeGreaterThan(0);
    for (const ip of ['10.0.156.63', '10.0.0.0', '2001:db8:1::1', '10.1.0.0', '11.0.0.1', '2001:db9::1']) {
      expect(set.has(ip), ip).toBe(ip.startsWith('2001:db8') || (ip.startsWith('10.0.') && true));
    }
    lines[30_000] = '10.0.0.256';
    writeFileSync(file, lines.join('\n'));
    const e = await loadCidrFile(file).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CidrListError);
    expect((e as CidrListError).message).toBe(
      `${file}:30001: bad address or CIDR "10.0.0.256" (expected 10.0.0.0/8, 192.0.2.1 or 2001:db8::/32)`,
    );
  });
});
