/**
 * Every relative link in README.md and docs/*.md resolves (issue 45 item 9): the file or folder
 * it names exists, and its `#anchor`, when it has one and points at a markdown file, is the
 * GitHub slug of one of that file's headings (or an explicit `<a id>`). Links inside code (fenced blocks, inline code) and
 * HTML comments are not links; absolute URLs are not checked.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The text of a markdown file without fenced code, inline code and HTML comments. */
function prose(text: string): string {
  return text
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '')
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/(`+)[\s\S]*?\1/g, '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as dashes. */
function slug(heading: string): string {
  return heading
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a markdown file offers (repeated headings get -1, -2… as on GitHub). */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const withoutFences = text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const m of withoutFences.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  // An explicit anchor (`<a id="x"></a>`), as GitHub renders it: kept where a section moved.
  for (const m of withoutFences.matchAll(/<a (?:id|name)="([^"]+)"><\/a>/g)) out.add(m[1]!);
  return out;
}

/** The broken relative links of one markdown file, as `file: target (why)`. */
function brokenLinks(file: string, text: string, read: (path: string) => string | undefined): string[] {
  const broken: string[] = [];
  for (const m of prose(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = m[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const [path = '', anchor] = target.split('#', 2);
    const resolved = path === '' ? file : join(dirname(file), decodeURIComponent(path));
    const where = `${relative(ROOT, file)}: ${target}`;
    if (path !== '' && !existsSync(resolved)) {
      broken.push(`${where} (no such file)`);
      continue;
    }
    if (anchor === undefined || anchor === '' || !resolved.endsWith('.md')) continue;
    const body = read(resolved);
    if (body === undefined || !anchors(body).has(anchor)) broken.push(`${where} (no heading #${anchor})`);
  }
  return broken;
}

function readMarkdown(path: string): string | undefined {
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
}

const DOCS = join(ROOT, 'docs');
const FILES = [
  join(ROOT, 'README.md'),
  ...readdirSync(DOCS)
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(DOCS, f)),
];

describe('documentation links', () => {
  it.each(FILES.map((f) => [relative(ROOT, f), f]))('%s: every relative link and anchor resolves', (_name, file) => {
    expect(brokenLinks(file, readFileSync(file, 'utf8'), readMarkdown)).toEqual([]);
  });

  it('finds a missing file and a missing heading, and ignores code and absolute URLs', () => {
    const file = join(DOCS, 'example.md');
    const text = [
      '# Title',
      '## Two words (`x: y`)',
      '<a id="moved"></a>',
      '[ok](#two-words-x-y) [ok](#title) [ok](#moved) [ok](../README.md) [web](https://example.test/#nope)',
      '[gone](no-such-page.md) [bad](#nowhere) [bad](../README.md#no-such-heading)',
      '`[code](no-such-file.md)`',
      '```',
      '[fenced](no-such-file.md)',
      '```',
    ].join('\n');
    const read = (p: string) => (p === file ? text : readMarkdown(p));
    expect(brokenLinks(file, text, read)).toEqual([
      'docs/example.md: no-such-page.md (no such file)',
      'docs/example.md: #nowhere (no heading #nowhere)',
      'docs/example.md: ../README.md#no-such-heading (no heading #no-such-heading)',
    ]);
  });
});
