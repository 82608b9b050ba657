/**
 * The layer rules (DESIGN "Layout and layers"): arrows point down only. Every relative import
 * (static, dynamic, or a `new URL(…, import.meta.url)` a worker runs) of every source file is
 * resolved and checked against the table below, so a new upward import fails CI.
 *
 *   cli/ → app/ → panels/, address-books/, operators/ → src/
 *
 * And the top of it: nothing outside cli/ and bin/ imports the command line (every .ts, .js and
 * .mjs of the repository, tests, bench and examples included), except a command's own tests,
 * listed in COMMAND_TESTS with the one command each runs. Store operations and helpers that a
 * command shares live below it (the books, app/).
 *
 * Inside the layers the arrows point one way too: no file-level import cycle (type-only imports
 * included: a shape two modules share goes into a types-only module), no cycle between folders,
 * and no panel imports another panel (app/ lends one panel's engine to another). Every folder
 * of code has a README.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cycles, folderGraph, importGraph, sourceFiles } from '../harness/import-graph.ts';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** For each layer, the layers it may not import from. */
const FORBIDDEN: Record<string, readonly string[]> = {
  src: ['panels', 'address-books', 'operators', 'policies', 'app', 'cli', 'plugin'],
  panels: ['address-books', 'operators', 'app', 'cli', 'plugin'],
  'address-books': ['panels', 'app', 'cli', 'plugin'],
  operators: ['panels', 'address-books', 'app', 'cli', 'plugin'],
  policies: ['panels', 'address-books', 'operators', 'app', 'cli', 'plugin'],
  app: ['cli', 'plugin'],
  // The public entry (switchboard/plugin) re-exports the contracts and helpers; the router never imports it.
  plugin: ['panels', 'app', 'cli'],
};

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sources(p));
    else if (/\.(ts|js|mjs)$/.test(name) && !name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

/** The folders whose imports must form no cycle (every .ts of the repository but the tests). */
const GRAPH_DIRS = [
  'src',
  'panels',
  'operators',
  'policies',
  'address-books',
  'app',
  'cli',
  'bin',
  'examples',
  'bench',
  'plugin',
];

/** The layers of router code, each folder of which explains itself in a README. */
const CODE_DIRS = ['src', 'panels', 'operators', 'policies', 'address-books', 'app', 'cli', 'plugin'];

const SPEC = /(?:from\s+|import\(\s*|new URL\(\s*|import\s+)['"](\.{1,2}\/[^'"]+)['"]/g;

/** `file: specifier → target layer` for every import that breaks the rules. */
function violations(): string[] {
  const bad: string[] = [];
  for (const [layer, forbidden] of Object.entries(FORBIDDEN)) {
    for (const file of sources(join(ROOT, layer))) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(SPEC)) {
        const target = relative(ROOT, resolve(dirname(file), m[1]!)).split('/')[0]!;
        if (forbidden.includes(target)) bad.push(`${relative(ROOT, file)}: ${m[1]} (${layer} → ${target})`);
      }
    }
  }
  return bad;
}

/** The tests whose subject is a command: each may import that command (its exported entry), nothing else in cli/. */
const COMMAND_TESTS: Record<string, string> = {
  'test/unit/route-cli.test.ts': 'cli/route.ts',
  'test/unit/h2c-check-warning.test.ts': 'cli/check.ts',
  'test/unit/panel-config.test.ts': 'cli/check.ts',
  'test/unit/acme-config.test.ts': 'cli/check.ts',
};

/** Every source file outside cli/, bin/, node_modules and dot folders, tests included. */
function outsideCli(dir = ROOT): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (name.startsWith('.') || name === 'node_modules' || (dir === ROOT && (name === 'cli' || name === 'bin')))
      continue;
    if (statSync(p).isDirectory()) out.push(...outsideCli(p));
    else if (/\.(ts|js|mjs)$/.test(name)) out.push(p);
  }
  return out;
}

/** `file: specifier → cli/…` for each import of the command line in `text` that `file` may not make. */
function cliImports(file: string, text: string): string[] {
  const bad: string[] = [];
  const rel = relative(ROOT, file);
  for (const m of text.matchAll(SPEC)) {
    const target = relative(ROOT, resolve(dirname(file), m[1]!));
    if (target.split('/')[0] === 'cli' && COMMAND_TESTS[rel] !== target) bad.push(`${rel}: ${m[1]} (→ ${target})`);
  }
  return bad;
}

describe('layers', () => {
  it('no file imports from a layer above its own', () => {
    expect(violations()).toEqual([]);
  });

  it('nothing outside cli/ and bin/ imports cli/, but a command test its command', () => {
    expect(outsideCli().flatMap((f) => cliImports(f, readFileSync(f, 'utf8')))).toEqual([]);
  });

  it('each command test listed imports its command (the list holds no stale entry)', () => {
    for (const [test, command] of Object.entries(COMMAND_TESTS)) {
      const text = readFileSync(join(ROOT, test), 'utf8');
      const targets = [...text.matchAll(SPEC)].map((m) => relative(ROOT, resolve(join(ROOT, dirname(test)), m[1]!)));
      expect(targets, test).toContain(command);
    }
  });

  it('the cli rule fails on a store operation, a helper, or another command imported from cli/', () => {
    // Built from parts so this file's own text holds no import of cli/.
    const spec = (f: string) => ['..', '..', 'cli', f].join('/');
    const from = (f: string) => `import { x } from '${spec(f)}';`;
    const bench = join(ROOT, 'bench/db-books.ts');
    const unit = (f: string) => join(ROOT, 'test/unit', f);
    expect(cliImports(unit('sqlite-book.test.ts'), from('db.ts'))).toHaveLength(1);
    expect(cliImports(join(ROOT, 'examples/demo/start.ts'), from('index.ts'))).toHaveLength(1);
    expect(cliImports(bench, `const m = await import('${spec('etcd.ts').slice(3)}');`)).toHaveLength(1);
    expect(cliImports(unit('route-cli.test.ts'), from('check.ts'))).toHaveLength(1);
    expect(cliImports(unit('route-cli.test.ts'), from('route.ts'))).toEqual([]);
  });

  it('the checker sees an upward import (it can fail)', () => {
    const text = "import { x } from '../../address-books/bfe/index.ts';";
    const m = [...text.matchAll(SPEC)][0];
    expect(m?.[1]).toBe('../../address-books/bfe/index.ts');
    const target = relative(ROOT, resolve(join(ROOT, 'panels/net'), m![1]!)).split('/')[0];
    expect(FORBIDDEN.panels).toContain(target);
  });

  it('no file-level import cycle, type-only imports included', () => {
    expect(cycles(importGraph(ROOT, sourceFiles(ROOT, GRAPH_DIRS)))).toEqual([]);
  });

  it('no cycle between folders', () => {
    expect(cycles(folderGraph(importGraph(ROOT, sourceFiles(ROOT, GRAPH_DIRS))))).toEqual([]);
  });

  it('no panel imports another panel', () => {
    const graph = importGraph(ROOT, sourceFiles(ROOT, ['panels']));
    const panelOf = (f: string) => f.split('/')[1];
    const bad = [...graph].flatMap(([file, targets]) =>
      targets.filter((t) => t.startsWith('panels/') && panelOf(t) !== panelOf(file)).map((t) => `${file} → ${t}`),
    );
    expect(bad).toEqual([]);
  });

  it('every folder of code has a README', () => {
    const missing: string[] = [];
    const walk = (dir: string): void => {
      const names = readdirSync(join(ROOT, dir));
      if (names.some((n) => /\.(ts|js)$/.test(n)) && !names.includes('README.md')) missing.push(dir);
      for (const n of names)
        if (n !== 'node_modules' && statSync(join(ROOT, dir, n)).isDirectory()) walk(`${dir}/${n}`);
    };
    for (const layer of CODE_DIRS) walk(layer);
    expect(missing).toEqual([]);
  });

  it('the cycle checks see a cycle added through a type-only import, at file and folder level', () => {
    const files = sourceFiles(ROOT, GRAPH_DIRS);
    const read = (f: string) => {
      const text = readFileSync(join(ROOT, f), 'utf8');
      // src/base/errors.ts is imported, directly or not, by the panel contract: closing the loop.
      return f === 'src/base/errors.ts' ? `${text}\nimport type { Engine } from '../panel/contract.ts';\n` : text;
    };
    const graph = importGraph(ROOT, files, read);
    expect(cycles(graph).some((c) => c.includes('src/base/errors.ts') && c.includes('src/panel/contract.ts'))).toBe(
      true,
    );
    expect(cycles(folderGraph(graph)).some((c) => c.includes('src/base') && c.includes('src/panel'))).toBe(true);
    const panels = importGraph(ROOT, ['panels/net/index.ts'], () => "import { x } from '../http2/index.ts';");
    expect(panels.get('panels/net/index.ts')).toEqual(['panels/http2/index.ts']);
  });

  it('src/ matches the rows of src/README.md: every folder listed once, every import to a lower row', () => {
    const rows = readmeRows(readFileSync(join(ROOT, 'src/README.md'), 'utf8'));
    const folders = readdirSync(join(ROOT, 'src')).filter((n) => statSync(join(ROOT, 'src', n)).isDirectory());
    expect([...rows.keys()].sort()).toEqual(folders.sort());
    expect(upwardFolderImports(importGraph(ROOT, sourceFiles(ROOT, ['src'])), rows)).toEqual([]);
  });

  it('the row check fails on an import to the same or a higher row', () => {
    const rows = new Map([
      ['base', 0],
      ['peek', 2],
      ['config', 2],
    ]);
    const graph = new Map([
      ['src/peek/a.ts', ['src/base/b.ts', 'src/config/c.ts']],
      ['src/base/b.ts', ['src/peek/a.ts']],
    ]);
    expect(upwardFolderImports(graph, rows)).toEqual([
      'src/peek/a.ts → src/config/c.ts (row 2 → 2)',
      'src/base/b.ts → src/peek/a.ts (row 0 → 2)',
    ]);
  });
});

/** The rows of the folder table in src/README.md ("  6   listener/  …"): folder name → row. */
function readmeRows(readme: string): Map<string, number> {
  const section = readme.slice(readme.indexOf('## The folders, arrows pointing down'));
  const block = section.slice(section.indexOf('```') + 3, section.indexOf('```', section.indexOf('```') + 3));
  const rows = new Map<string, number>();
  for (const line of block.split('\n')) {
    const m = /^\s*(\d+)\s+(.*)$/.exec(line);
    if (m === null) continue;
    for (const name of m[2]!.matchAll(/(?:^|\s)([a-z][a-z0-9-]*)\/(?=\s|$)/g)) rows.set(name[1]!, Number(m[1]));
  }
  return rows;
}

/** `from → to (row a → b)` for every import between top-level folders of src/ that does not point to a lower row. */
function upwardFolderImports(
  graph: ReadonlyMap<string, readonly string[]>,
  rows: ReadonlyMap<string, number>,
): string[] {
  const top = (f: string) => f.split('/')[1]!;
  const bad: string[] = [];
  for (const [file, targets] of graph) {
    for (const t of targets) {
      if (!t.startsWith('src/') || top(t) === top(file)) continue;
      const from = rows.get(top(file)) ?? Number.NaN;
      const to = rows.get(top(t)) ?? Number.NaN;
      if (!(to < from)) bad.push(`${file} → ${t} (row ${from} → ${to})`);
    }
  }
  return bad;
}
