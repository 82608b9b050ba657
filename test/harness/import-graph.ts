/**
 * The repository's import graph as the layer test reads it: every relative import of every
 * source file (static, type-only, re-exports, dynamic `import()`, and a `new URL(…,
 * import.meta.url)` that a worker runs) resolved to a repository path, plus the strongly
 * connected components of that graph (Tarjan) for files and for the folders that hold them.
 *
 * Text, not a compiler: a specifier in a comment or string counts too, which errs on the side of
 * reporting an arrow. Tests (`*.test.ts`) are leaves and are left out.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix, relative, resolve, sep } from 'node:path';

/** `from '…'`, `import('…')`, `new URL('…'`, `import '…'` with a relative specifier. */
export const SPECIFIER = /(?:from\s+|import\(\s*|new URL\(\s*|import\s+)['"](\.{1,2}\/[^'"]+)['"]/g;

/** file → the files it imports, all as repository-relative posix paths. */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

function toPosix(p: string): string {
  return p.split(sep).join('/');
}

/** Every `.ts`, `.js` and `.mjs` under `dirs` of `root`, tests and node_modules left out. */
export function sourceFiles(root: string, dirs: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      if (name === 'node_modules' || name.startsWith('.')) continue;
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(ts|js|mjs)$/.test(name) && !name.endsWith('.test.ts')) out.push(toPosix(relative(root, p)));
    }
  };
  for (const d of dirs) {
    try {
      if (statSync(join(root, d)).isDirectory()) walk(join(root, d));
    } catch {
      // a folder the checkout does not have
    }
  }
  return out.sort();
}

/** The imports of one file's text, resolved against its repository path `file`. */
export function importsOf(file: string, text: string): string[] {
  const seen = new Set<string>();
  for (const m of text.matchAll(SPECIFIER)) seen.add(posix.normalize(posix.join(posix.dirname(file), m[1]!)));
  return [...seen];
}

/** The import graph of `files` (repository paths under `root`); `read` may stand in for the disk. */
export function importGraph(
  root: string,
  files: readonly string[],
  read: (file: string) => string = (f) => readFileSync(resolve(root, f), 'utf8'),
): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const f of files) graph.set(f, importsOf(f, read(f)));
  return graph;
}

/** The cycles of `graph`: each strongly connected component of two or more nodes, or one that imports itself. */
export function cycles(graph: ImportGraph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** The graph of folders: an arrow from each file's folder to each imported file's other folder. */
export function folderGraph(graph: ImportGraph): Map<string, string[]> {
  const folders = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    const from = posix.dirname(file);
    if (!folders.has(from)) folders.set(from, new Set());
    for (const t of targets) {
      const to = posix.dirname(t);
      if (to !== from && graph.has(t)) folders.get(from)!.add(to);
    }
  }
  return new Map([...folders].map(([k, v]) => [k, [...v].sort()]));
}

/** The repository root of this checkout. */
export const REPO_ROOT = resolve(dirname(new URL(import.meta.url).pathname), '..', '..');
