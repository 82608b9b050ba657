/**
 * A list file kept current (BFE's hot-reloaded `ip_blocklist.data`): loaded at `start()`,
 * reloaded when it changes (src/base/file-watch.ts, stat polling). Reloads run one after
 * another; a reload that fails (a bad line, the file gone) keeps the list it had and is
 * reported, so an edit in progress never empties a deny list. Established connections are not
 * touched: the next lookup sees the new list.
 */
import { type FileWatcher, watchFiles } from '../../src/base/file-watch.ts';
import { loadCidrFile } from './cidr-list.ts';
import type { CidrSet } from './cidr-set.ts';

/** A watched address-list file. */
export class WatchedCidrFile {
  readonly #file: string;
  readonly #onError: (e: unknown) => void;
  readonly #intervalMs: number;
  #set: CidrSet | undefined;
  #watcher: FileWatcher | undefined;
  #loading: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(file: string, onError: (e: unknown) => void, intervalMs = 250) {
    this.#file = file;
    this.#onError = onError;
    this.#intervalMs = intervalMs;
  }

  /** The current list; undefined before `start()`. */
  get set(): CidrSet | undefined {
    return this.#set;
  }

  /**
   * Starts watching the file, then loads it (a failure rejects: the rule set does not start).
   * Watching first: an edit that lands while the file is read is seen and reloaded.
   */
  async start(): Promise<void> {
    this.#watcher = watchFiles([this.#file], () => this.#reload(), this.#intervalMs);
    const first = loadCidrFile(this.#file);
    // A reload the watch asks for meanwhile runs after this load, so the newer list wins.
    this.#loading = first.then(
      () => {},
      () => {},
    );
    try {
      this.#set = await first;
    } catch (e) {
      this.#watcher.close();
      throw e;
    }
  }

  close(): void {
    this.#closed = true;
    this.#watcher?.close();
  }

  #reload(): void {
    this.#loading = this.#loading.then(async () => {
      try {
        const set = await loadCidrFile(this.#file);
        if (!this.#closed) this.#set = set;
      } catch (e) {
        if (!this.#closed) this.#onError(e);
      }
    });
  }
}
