/**
 * The address-book conformance suite (STYLE §17): every book passes it. A fixture builds a book
 * whose source routes host `a.test` to a cluster with the single backend 127.0.0.1:9001, can
 * change the source so `a.test` goes to 127.0.0.1:9002, and can break the source.
 */
import { getActiveResourcesInfo } from 'node:process';
import { describe, expect, it } from 'vitest';
import type { AddressBook, Candidates, Request } from '../../src/contracts/types.ts';
import { createRequest } from '../../src/request/request.ts';
import { eventually } from '../harness/router.ts';

export interface AddressBookFixture {
  readonly book: AddressBook;
  /** Change the source: host a.test now routes to 127.0.0.1:9002. */
  update(): Promise<void>;
  /** Make the source invalid. */
  breakSource(): Promise<void>;
  cleanup(): Promise<void>;
}

/** A request for `host` and `path` as the net panel would build it. */
export function requestFor(host: string, path: string | undefined = '/'): Request {
  return createRequest({
    protocol: path === undefined ? 'tls' : 'http1',
    host,
    port: undefined,
    path,
    target: path,
    query: '',
    method: path === undefined ? undefined : 'GET',
    headers: [['Host', host]],
    sni: path === undefined ? host : undefined,
    alpn: [],
    clientIp: '127.0.0.1',
    clientPort: 40000,
    peerIp: '127.0.0.1',
    localIp: '127.0.0.1',
    localPort: 8080,
    vip: undefined,
    secure: path === undefined,
    trustedClient: false,
    tls: undefined,
    listener: 'web',
  });
}

function backendsOf(c: Candidates | undefined): string[] {
  return c === undefined ? [] : c.subclusters.flatMap((s) => s.backends.map((b) => b.id));
}

export function addressBookConformance(label: string, make: () => Promise<AddressBookFixture>): void {
  describe(`address-book conformance: ${label}`, () => {
    it('answers synchronously after start()', async () => {
      const f = await make();
      try {
        await f.book.start();
        const result = f.book.findAddresses(requestFor('a.test', '/x'));
        expect(result).not.toBeInstanceOf(Promise);
        expect(backendsOf(result)).toEqual(['127.0.0.1:9001']);
        expect(f.book.findAddresses(requestFor('unknown.invalid', '/'))).toBeUndefined();
      } finally {
        await f.book.close();
        await f.cleanup();
      }
    });

    it('returns frozen candidates that later lookups do not change', async () => {
      const f = await make();
      try {
        await f.book.start();
        const c = f.book.findAddresses(requestFor('a.test'))!;
        expect(Object.isFrozen(c)).toBe(true);
        expect(Object.isFrozen(c.subclusters)).toBe(true);
        expect(Object.isFrozen(c.subclusters[0]!.backends[0])).toBe(true);
        expect(Object.isFrozen(c.policy)).toBe(true);
      } finally {
        await f.book.close();
        await f.cleanup();
      }
    });

    it('changes version only by swapping a new snapshot, and applies a valid change', async () => {
      const f = await make();
      try {
        await f.book.start();
        const v0 = f.book.version;
        const before = f.book.findAddresses(requestFor('a.test'))!;
        expect(f.book.version).toBe(v0);
        await f.update();
        await eventually(() => f.book.version > v0, 10_000, 'the book to pick up the change');
        expect(backendsOf(f.book.findAddresses(requestFor('a.test')))).toEqual(['127.0.0.1:9002']);
        // The old snapshot's candidates are untouched.
        expect(backendsOf(before)).toEqual(['127.0.0.1:9001']);
      } finally {
        await f.book.close();
        await f.cleanup();
      }
    });

    it('keeps the old snapshot when the source breaks', async () => {
      const f = await make();
      try {
        await f.book.start();
        const v0 = f.book.version;
        await f.breakSource();
        // Give the book time to notice and reject the change; polling would wait for nothing.
        await new Promise((r) => setTimeout(r, 1500));
        expect(f.book.version).toBe(v0);
        expect(backendsOf(f.book.findAddresses(requestFor('a.test')))).toEqual(['127.0.0.1:9001']);
      } finally {
        await f.book.close();
        await f.cleanup();
      }
    });

    it('leaves no timers or handles after close()', async () => {
      const before = getActiveResourcesInfo().filter((r) => r !== 'TTYWrap').length;
      const f = await make();
      await f.book.start();
      await f.book.close();
      await f.cleanup();
      await eventually(
        () => getActiveResourcesInfo().filter((r) => r !== 'TTYWrap').length <= before,
        5_000,
        'handles to be released',
      );
    });
  });
}
