/** The built-in address books by name. */
import type { AddressBookFactory } from '../src/plugin.ts';
import { bfeAddressBook } from './bfe/index.ts';
import { etcdAddressBook } from './etcd/book.ts';
import { fileAddressBook } from './file/book.ts';
import { sqliteAddressBook } from './sqlite/book.ts';

export const builtinAddressBooks: Readonly<Record<string, AddressBookFactory>> = {
  bfe: bfeAddressBook,
  file: fileAddressBook,
  sqlite: sqliteAddressBook,
  etcd: etcdAddressBook,
};
