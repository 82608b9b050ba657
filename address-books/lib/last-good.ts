/**
 * Last known good (README.md, "Last known good"): a store-backed book keeps a local copy of the
 * data of the last snapshot it loaded from its store, and starts from that copy when the store
 * does not answer at start, so a router can restart during a store outage.
 *
 * 1. After every snapshot built from the live store, `save(data)` serialises the data the
 *    snapshot was compiled from (plain JSON, in time slices: `sliced.ts`), writes it to
 *    `FILE.<16 random hex>.tmp`, fsyncs it and renames it over `FILE`: a reader sees the old
 *    file or the new one, never half of one. The temporary file is created exclusively
 *    (`O_CREAT | O_EXCL | O_NOFOLLOW`, mode 0600) under a name nobody can guess, so a symlink
 *    planted beside the cache is never followed and never overwrites what it points at; a
 *    failed save removes only a file it created itself. Saves run one at a time; a save asked for while one runs
 *    replaces the pending data (only the newest is written). A failed save is logged once per
 *    message and changes nothing else.
 * 2. `load()` is called only when the store is unreachable at start, and reads the file as
 *    every user-named file is read (src/base/safe-file.ts: a regular file of at most 64 MiB). A
 *    missing file is
 *    `undefined`; anything else wrong (not JSON, another format, written by another book or for
 *    another source) is a SWB_ERR_ADDRESS_BOOK naming the file and what is wrong.
 *
 * ```json
 * { "switchboard": "last-good", "format": 1, "book": "etcd", "source": "prefix /switchboard/",
 *   "savedAt": "2026-11-30T22:00:00.000Z", "data": { …the store's routing data… } }
 * ```
 *
 * `SnapshotBook` (`snapshot-book.ts`) wires this to the built-in books; a custom book can use
 * `LastGoodFile` on its own (README.md shows how).
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import type { Logger } from 'pino';
import { z } from 'zod';
import { SwitchboardError } from '../../src/base/errors.ts';
import { CONFIG_FILE, FileReadError, readUserText } from '../../src/base/safe-file.ts';
import { formatIssues } from '../../src/config/errors.ts';
import { runSliced, stringifySteps } from './sliced.ts';

/** The `cache:` option of a store-backed book: a file path relative to the config file. */
export const lastGoodOption = z.string().min(1).optional();

/** What a cache file holds besides its data. */
export interface LastGoodIdentity {
  /** The book's name (`etcd`, `sqlite`, or a custom book's). */
  readonly book: string;
  /** What the data was read from (`prefix /switchboard/`); a file for another source is refused. */
  readonly source: string;
}

/** A loaded cache: the data and when it was saved. */
export interface LastGood {
  readonly data: unknown;
  readonly savedAt: Date;
}

const fileSchema = z.object({
  switchboard: z.literal('last-good'),
  format: z.literal(1),
  book: z.string(),
  source: z.string(),
  savedAt: z.iso.datetime(),
  data: z.unknown().refine((v) => v !== undefined, { error: 'missing' }),
});

/** The temporary file: created here or not at all, never through a symlink. */
const CREATE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** One book's cache file (see the file header). */
export class LastGoodFile {
  /** Absolute path of the file. */
  readonly file: string;
  readonly #identity: LastGoodIdentity;
  readonly #logger: Logger;
  readonly #label: string;
  #writing: Promise<void> | undefined;
  #pending: { data: unknown } | undefined;
  #lastFailure: string | undefined;

  constructor(file: string, identity: LastGoodIdentity, logger: Logger, label: string) {
    this.file = file;
    this.#identity = identity;
    this.#logger = logger;
    this.#label = label;
  }

  /** Saves `data` atomically in the background (the newest data wins); never throws. */
  save(data: unknown): void {
    this.#pending = { data };
    if (this.#writing === undefined) this.#writing = this.#drain();
  }

  /** Resolves once every save asked for so far is on disk (or has failed and been logged). */
  async flushed(): Promise<void> {
    while (this.#writing !== undefined) await this.#writing;
  }

  async #drain(): Promise<void> {
    try {
      while (this.#pending !== undefined) {
        const { data } = this.#pending;
        this.#pending = undefined;
        await this.#write(data);
      }
    } finally {
      this.#writing = undefined;
    }
  }

  async #write(data: unknown): Promise<void> {
    const tmp = `${this.file}.${randomBytes(8).toString('hex')}.tmp`;
    let created = false;
    try {
      // Serialised in slices: a 10,000-host table is several MB of JSON.
      const envelope = {
        switchboard: 'last-good',
        format: 1,
        ...this.#identity,
        savedAt: new Date().toISOString(),
        data,
      };
      const text = await runSliced(stringifySteps(envelope, 3));
      const fh = await open(tmp, CREATE_NEW, 0o600);
      created = true;
      try {
        await fh.writeFile(text);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, this.file);
      this.#lastFailure = undefined;
    } catch (e) {
      if (created) await unlink(tmp).catch(() => undefined);
      // The temporary name is random: said as a pattern, so one failure is logged once.
      const message = (e as Error).message.replaceAll(tmp, `${this.file}.<random>.tmp`);
      if (message !== this.#lastFailure) {
        this.#logger.warn({ error: message, cache: this.file }, `${this.#label}: saving the last-good cache failed`);
      }
      this.#lastFailure = message;
    }
  }

  /** Reads the cache: undefined when there is none; SWB_ERR_ADDRESS_BOOK when it cannot be used. */
  async load(): Promise<LastGood | undefined> {
    let text: string;
    try {
      text = await readUserText(this.file, CONFIG_FILE);
    } catch (e) {
      if (e instanceof FileReadError && e.reason === 'not_found') return undefined;
      throw this.#error(`read: ${(e as Error).message}`);
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (e) {
      throw this.#error(`not JSON (${(e as Error).message})`);
    }
    const parsed = fileSchema.safeParse(raw);
    if (!parsed.success) {
      throw this.#error(`not a last-good cache file (${formatIssues(parsed.error.issues.slice(0, 1))[0]})`);
    }
    const f = parsed.data;
    if (f.book !== this.#identity.book || f.source !== this.#identity.source) {
      throw this.#error(
        `written by the ${f.book} book for ${f.source}, this book is ${this.#identity.book} for ${this.#identity.source}`,
      );
    }
    return { data: f.data, savedAt: new Date(f.savedAt) };
  }

  #error(what: string): SwitchboardError {
    return new SwitchboardError('SWB_ERR_ADDRESS_BOOK', `last-good cache ${this.file}: ${what}`);
  }
}

/** `3h12m`, `4m05s`, `12s`: how old a cache is, for log lines. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  if (h > 0) return `${h}h${String(m).padStart(2, '0')}m`;
  if (m > 0) return `${m}m${String(sec).padStart(2, '0')}s`;
  return `${sec}s`;
}
