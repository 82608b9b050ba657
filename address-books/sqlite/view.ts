/**
 * Store rows → a BookView (`../lib/snapshot-book.ts`), for the sqlite and etcd books. Both
 * models end here: the BFE model through `compileRoutingTable` (the bfe book's compiler, no
 * second matcher; its Snapshot is the view) and the classic host → backends list through the
 * `file` book's matcher, so each keeps the exact semantics of the book it mirrors.
 */
import { z } from 'zod';
import { SwitchboardError } from '../../src/base/errors.ts';
import { formatIssues } from '../../src/config/errors.ts';
import type { BackendEntry, Request } from '../../src/contracts/types.ts';
import { compileRoutingTable, compileRoutingTableSliced } from '../bfe/compile.ts';
import type { Snapshot } from '../bfe/snapshot.ts';
import { matcherInventory } from '../file/inventory.ts';
import { buildMatcher } from '../file/matcher.ts';
import { entrySchema, type FileEntry } from '../file/parse.ts';
import type { BookView } from '../lib/snapshot-book.ts';
import { type Labels, relabel } from './relabel.ts';

/** What a store read produced before compiling. */
export interface StoreRead {
  readonly input: unknown;
  readonly labels: Labels;
  readonly problems: readonly string[];
}

function throwProblems(source: string, problems: readonly string[]): void {
  if (problems.length === 0) return;
  // `errors`: one line per problem for `check` and the CLI (src/config/errors.ts problemLines).
  const errors = problems.map((p) => `${source}: ${p}`);
  throw Object.assign(new SwitchboardError('SWB_ERR_CONFIG', `${source}: ${problems.join('; ')}`), { errors });
}

/** Compiles BFE-model input; throws SWB_ERR_CONFIG naming each bad row or key. */
export function compileBfeRead(read: StoreRead, source: string): BookView {
  throwProblems(source, read.problems);
  try {
    return compileRoutingTable(read.input);
  } catch (e) {
    throw relabel(e, read.labels, source);
  }
}

/**
 * `compileBfeRead` in time slices (`../lib/sliced.ts`): what the books use for background
 * rebuilds, so a 10,000-host table never holds the event loop for the whole compile. `previous`:
 * the snapshot serving now, whose unchanged parts are reused (`../bfe/reuse.ts`).
 */
export async function compileBfeReadSliced(read: StoreRead, source: string, previous?: Snapshot): Promise<BookView> {
  throwProblems(source, read.problems);
  try {
    return await compileRoutingTableSliced(read.input, { previous });
  } catch (e) {
    throw relabel(e, read.labels, source);
  }
}

/** Compiles a classic host → backends list; throws SWB_ERR_CONFIG naming each bad row. */
export function compileClassicRead(read: StoreRead, source: string): BookView {
  throwProblems(source, read.problems);
  const parsed = z.array(entrySchema).safeParse(read.input);
  if (!parsed.success) {
    const problems = formatIssues(parsed.error.issues).map((line) => {
      const colon = line.indexOf(': ');
      return colon < 0 ? line : read.labels.locate(line.slice(0, colon)) + line.slice(colon);
    });
    throwProblems(source, problems);
  }
  const entries: FileEntry[] = parsed.data!;
  const seen = new Map<string, number>();
  const dupes: string[] = [];
  entries.forEach((e, i) => {
    const key = `${e.host} ${e.path ?? ''}`;
    const first = seen.get(key);
    if (first !== undefined)
      dupes.push(`${read.labels.locate(`[${i}]`)}: duplicate of ${read.labels.locate(`[${first}]`)}`);
    seen.set(key, i);
  });
  throwProblems(source, dupes);
  const matcher = buildMatcher(entries);
  return Object.freeze({
    table: Object.freeze(entries),
    findAddresses: (request: Request) => matcher.match(request.host, request.path),
    inventory: () => matcherInventory(matcher),
    *backends(): Iterable<BackendEntry> {
      for (const c of matcher.all)
        for (const backend of c.subclusters[0]!.backends) yield { backend, policy: c.policy, cluster: c.cluster };
    },
  });
}
