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
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** For each layer, the layers it may not import from. */
const FORBIDDEN: Record<string, readonly string[]> = {
  src: ['panels', 'address-books', 'operators', 'app', 'cli'],
  panels: ['address-books', 'operators', 'app', 'cli'],
  'address-books': ['panels', 'app', 'cli'],
  operators: ['panels', 'address-books', 'app', 'cli'],
  app: ['cli'],
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
});
