/**
 * Watching config-like files for change: `fs.watchFile` stat polling, which survives editors
 * that replace a file by rename and needs no inotify budget. Changes are debounced and
 * delivered once per burst; `close()` removes every watcher and timer.
 */
import { type Stats, unwatchFile, watchFile } from 'node:fs';

export interface FileWatcher {
  close(): void;
}

/** Calls `onChange` (debounced by `debounceMs`) when any of `paths` changes. */
export function watchFiles(
  paths: readonly string[],
  onChange: () => void,
  intervalMs = 250,
  debounceMs = 50,
): FileWatcher {
  let timer: NodeJS.Timeout | undefined;
  const listener = (curr: Stats, prev: Stats): void => {
    if (curr.mtimeMs === prev.mtimeMs && curr.size === prev.size && curr.ino === prev.ino) return;
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      onChange();
    }, debounceMs);
  };
  for (const p of paths) watchFile(p, { interval: intervalMs, persistent: false }, listener);
  return {
    close() {
      if (timer !== undefined) clearTimeout(timer);
      for (const p of paths) unwatchFile(p, listener);
    },
  };
}
