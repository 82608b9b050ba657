/**
 * The layer rules (DESIGN "Layout and layers"): arrows point down only. Every relative import
 * (static, dynamic, or a `new URL(…, import.meta.url)` a worker runs) of every source file is
 * resolved and checked against the table below, so a new upward import fails CI.
 *
 *   cli/ → app/ → panels/, address-books/, operators/ → src/
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

describe('layers', () => {
  it('no file imports from a layer above its own', () => {
    expect(violations()).toEqual([]);
  });

  it('the checker sees an upward import (it can fail)', () => {
    const text = "import { x } from '../../address-books/bfe/index.ts';";
    const m = [...text.matchAll(SPEC)][0];
    expect(m?.[1]).toBe('../../address-books/bfe/index.ts');
    const target = relative(ROOT, resolve(join(ROOT, 'panels/net'), m![1]!)).split('/')[0];
    expect(FORBIDDEN.panels).toContain(target);
  });
});
