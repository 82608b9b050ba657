/** The `sqlite` address book: routes in a SQLite file, polled with `PRAGMA data_version`. */
export { loadSqliteView, SqliteAddressBook, type SqliteBookOptions, sqliteAddressBook } from './book.ts';
export { initDatabase, SCHEMA_SQL, SCHEMA_VERSION } from './schema.ts';
export { writeRoutingTable, writeServers } from './write.ts';
