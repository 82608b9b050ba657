/**
 * The address list of `block` (policies/lib/cidr-set.ts, cidr-list.ts): the sorted-range lookup
 * agrees with a naive scan of every block on random lists and addresses (v4, v6, mapped v4,
 * nested and overlapping blocks), a bad line names file:line, and a long list is parsed in
 * slices that let the event loop run in between.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { CidrListError, cidrSetOf, loadCidrFile, parseCidrList } from '../../policies/lib/cidr-list.ts';
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
});
