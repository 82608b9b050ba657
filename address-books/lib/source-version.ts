/**
 * A file-backed book's own version of its routes (`RoutesOrigin`, src/contracts/types.ts): the
 * SHA-256 of the bytes it compiled (the first 12 hex digits, as `git` shortens) and the file's
 * mtime. The hash names the content, so the same file on two routers has the same version and
 * a `touch` changes only the time; made once per swap, never on the request path.
 */
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import type { RoutesOrigin } from '../../src/contracts/types.ts';

/** `sha256:` and the first 12 hex digits of the SHA-256 of `content`. */
export function contentVersion(content: string | Buffer): string {
  return `sha256:${createHash('sha256').update(content).digest('hex').slice(0, 12)}`;
}

/** Where `file`'s routes came from: its path, the hash of `content` (what was read) and its mtime. */
export async function fileOrigin(book: string, file: string, content: string | Buffer): Promise<RoutesOrigin> {
  const mtime = await stat(file).then(
    (s) => s.mtime.toISOString(),
    () => undefined,
  );
  return { book, source: file, version: contentVersion(content), changedAt: mtime };
}
