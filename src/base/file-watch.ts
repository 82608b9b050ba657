/**
 * Watching config-like files for change by stat polling, which survives editors that replace a
 * file by rename and needs no inotify budget. Changes are debounced and delivered once per
 * burst; `close()` stops every timer.
 *
 * The first stat of each file is taken synchronously when the watch starts, and each poll
 * compares with the last one seen. (`fs.watchFile` takes its first stat later, on the thread
 * pool: an edit made right after the watch started, before that stat ran, became its baseline
 * and was never reported. On a loaded CI machine a block list edited just after its rule set
 * started kept its old list.) Start watching before reading the file, so an edit that lands
 * while it is read is reported too.
 */
import { type Stats, stat, statSync } from 'node:fs';

export interface FileWatcher {
  close(): void;
}

/** What a poll compares: a missing or unreadable file is all zeros, so its return is a change. */
interface Seen {
  readonly mtimeMs: number;
  readonly size: number;
  readonly ino: number;
}

const GONE: Seen = { mtimeMs: 0, size: 0, ino: 0 };

function seenOf(s: Stats | undefined): Seen {
  return s === undefined ? GONE : { mtimeMs: s.mtimeMs, size: s.size, ino: s.ino };
}

function statNow(path: string): Seen {
  try {
    return seenOf(statSync(path));
  } catch {
    return GONE;
  }
}

/** Calls `onChange` (debounced by `debounceMs`) when any of `paths` changes. */
export function watchFiles(
  paths: readonly string[],
  onChange: () => void,
  intervalMs = 250,
  debounceMs = 50,
): FileWatcher {
  let debounce: NodeJS.Timeout | undefined;
  let closed = false;
  const changed = (): void => {
    if (debounce !== undefined) clearTimeout(debounce);
    debounce = setTimeout(() => {
      debounce = undefined;
      if (!closed) onChange();
    }, debounceMs);
  };
  const last = paths.map(statNow);
  let polling = false;
  const poll = (): void => {
    if (polling || closed || paths.length === 0) return; // a slow disk: the next tick polls again
    polling = true;
    let left = paths.length;
    paths.forEach((p, i) => {
      stat(p, (err, s) => {
        const now = seenOf(err === null ? s : undefined);
        const before = last[i]!;
        last[i] = now;
        if (now.mtimeMs !== before.mtimeMs || now.size !== before.size || now.ino !== before.ino) changed();
        if (--left === 0) polling = false;
      });
    });
  };
  const timer = setInterval(poll, intervalMs).unref();
  return {
    close() {
      closed = true;
      clearInterval(timer);
      if (debounce !== undefined) clearTimeout(debounce);
    },
  };
}
