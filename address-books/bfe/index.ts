/** The `bfe` address book: host table, basic and advanced rules, clusters, BFE JSON import. */
export { loadBfeDir } from './bfe-json.ts';
export { BfeAddressBook, type BfeBookOptions, bfeAddressBook } from './book.ts';
export { type CompileOptions, compileRoutingTable } from './compile.ts';
export { type Explanation, explain, formatExplanation } from './explain.ts';
export { importBfeDir } from './import-bfe.ts';
export { type RoutingTable, routingTableSchema } from './routing-table.ts';
export type { Snapshot } from './snapshot.ts';
export { routingTableToYaml } from './yaml.ts';
