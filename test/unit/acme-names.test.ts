/**
 * ACME names default to the exact hosts of the routing table (app/acme/names.ts): bfe products'
 * `hosts`, the file book's `host:` entries; wildcards, `*`, ports and non-host strings skipped.
 */
import { describe, expect, it } from 'vitest';
import { routingTableHosts } from '../../app/acme/names.ts';

describe('routingTableHosts', () => {
  it('bfe products: exact hosts only, lower-cased, unique, sorted', () => {
    const table = {
      products: {
        a: {
          hosts: ['WWW.Example.com', '*.example.com', 'api.example.com:443'],
          rules: [{ cluster: 'web.example.com' }],
        },
        b: { hosts: ['www.example.com', '*', 'localhost'] },
      },
    };
    expect(routingTableHosts(table)).toEqual(['api.example.com', 'www.example.com']);
  });

  it('file book entries', () => {
    const entries = [
      { host: 'shop.example.org', backends: ['127.0.0.1:1'] },
      { host: '*.example.org', backends: ['127.0.0.1:2'] },
    ];
    expect(routingTableHosts(entries)).toEqual(['shop.example.org']);
  });

  it('no table: no names', () => {
    expect(routingTableHosts(undefined)).toEqual([]);
    expect(routingTableHosts(null)).toEqual([]);
  });
});
