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

  /** Loads the file (a failure rejects: the rule set does not start) and starts watching it. */
  async start(): Promise<void> {
    this.#set = await loadCidrFile(this.#file);
    if (!this.#closed) this.#watcher = watchFiles([this.#file], () => this.#reload(), this.#intervalMs);
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
