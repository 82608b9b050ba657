/**
 * The book reload-gc.ts and reload-turns.ts reload (their children, in the tree under test):
 * the 10,000-host table in a `sqlite` or `bfe` book, started, and a `reload(port)` that swaps a
 * new snapshot in. sqlite: cluster c0's backends move to `port`, then a poll. bfe: the routes
 * file alternates between two tables (backends on ports 9101 and 9102), then a reload. Each
 * throws when the book did not swap.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';

/** Imports a module of the tree under test by its path from that tree's root. */
// biome-ignore lint/suspicious/noExplicitAny: modules of another checkout (the baseline), not typed here
export type TreeImport = (path: string) => Promise<Record<string, any>>;

export async function startReloadBook(
  which: 'sqlite' | 'bfe',
  imp: TreeImport,
  dir: string,
  context: object,
  routes: (port: number) => unknown,
): Promise<(port: number) => Promise<void>> {
  if (which === 'bfe') {
    const { bfeAddressBook } = await imp('address-books/bfe/book.ts');
    writeFileSync(join(dir, 'routes.json'), JSON.stringify(routes(9001)));
    const book = bfeAddressBook.create(bfeAddressBook.options.parse({ routes: 'routes.json' }), context);
    await book.start();
    const texts = [JSON.stringify(routes(9101)), JSON.stringify(routes(9102))];
    let i = 0;
    return async () => {
      writeFileSync(join(dir, 'routes.json'), texts[i++ % 2]!);
      if (!(await book.reload())) throw new Error('bench: the reload did not swap');
    };
  }
  const { initDatabase } = await imp('address-books/sqlite/schema.ts');
  const { writeRoutingTable } = await imp('address-books/sqlite/write.ts');
  const { sqliteAddressBook } = await imp('address-books/sqlite/book.ts');
  const w = new DatabaseSync(join(dir, 'routes.db'));
  initDatabase(w);
  writeRoutingTable(w, routes(9001));
  const book = sqliteAddressBook.create(
    sqliteAddressBook.options.parse({ path: 'routes.db', pollInterval: 3_600_000 }),
    context,
  );
  await book.start();
  return async (port) => {
    w.exec(`UPDATE backends SET address = '127.0.0.1:${port}' WHERE cluster = 'c0'`);
    if (!(await book.poll())) throw new Error('bench: the poll did not swap');
  };
}
