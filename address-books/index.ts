/**
 * The built-in address books by name. Each is loaded on first use, so a router that does not
 * use etcd never loads its client (and its gRPC stack).
 */
import type { AddressBookFactory } from '../src/contracts/plugin.ts';

export const builtinAddressBooks: Readonly<Record<string, () => Promise<AddressBookFactory>>> = {
  bfe: async () => (await import('./bfe/index.ts')).bfeAddressBook,
  file: async () => (await import('./file/book.ts')).fileAddressBook,
  sqlite: async () => (await import('./sqlite/book.ts')).sqliteAddressBook,
  etcd: async () => (await import('./etcd/book.ts')).etcdAddressBook,
};
