/**
 * The one pass of `switchboard check` (cli/check.ts prints it): every problem of a file, each
 * line `<config path>: <message>`:
 *
 * 1. the schema, each plugin (name, options), the panel's refusals, the policies and the
 *    access-log rules (load-config.ts `inspectConfig`), each whenever the sections it reads are
 *    valid (config-sections.ts), even when other sections have errors;
 * 2. the TLS material whenever the listeners are valid, the `acme:` sections (and the fleet's
 *    key) whenever the listeners and `fleet:` are (acme/check.ts), and a dry build of the
 *    address book whenever its options are valid (routing-table and condition errors, files it
 *    reads). A check that cannot run is listed in `skipped` with the sections it waits for;
 * 3. warnings, the config still valid: `h2c: allow` on a per-request net listener whose book
 *    tells paths apart (h2c-warnings.ts); a `policies:` rule at `request` or `routed` under
 *    `routing: per-connection`, which checks only the first request of each connection
 *    (runtime/policy-warnings.ts).
 *
 * A routes file (what `import-bfe` writes) or a `file` book's list is recognised and loaded with
 * its book instead. Nothing listens; the book is started and closed once.
 */

import { isSwitchboardError } from '../src/base/errors.ts';
import { createLogger } from '../src/base/log.ts';
import { defaultRandom } from '../src/base/random.ts';
import { ConfigError, problemLines } from '../src/config/errors.ts';
import type { AddressBookFactory } from '../src/contracts/plugin.ts';
import type { AddressBook } from '../src/contracts/types.ts';
import { LocalRegistry } from '../src/registry/local.ts';
import { buildEngineTls, checkUpstreamTls, type EngineTls } from '../src/tls/engine-tls.ts';
import { UpstreamTls } from '../src/tls/upstream.ts';
import { checkAcme } from './acme/check.ts';
import { mapping, type Section, unmet } from './config-sections.ts';
import { storeDown } from './exit.ts';
import { h2cAllowWarnings } from './h2c-warnings.ts';
import { inspectConfig, readConfigFile } from './load-config.ts';
import { resolveAddressBook } from './plugins/resolve.ts';
import { loadedPolicyWarnings } from './runtime/policy-warnings.ts';

/** What the file turned out to be, and its problems (none: valid). */
export type CheckResult =
  | {
      readonly kind: 'config';
      readonly path: string;
      readonly errors: readonly string[];
      readonly warnings: readonly string[];
      /** The further checks that could not run, each with why (`address book not built: addressBook has errors`). */
      readonly skipped: readonly string[];
      /** Only the address book's store did not answer: a runtime failure, not an invalid config. */
      readonly down: boolean;
    }
  | {
      readonly kind: 'routes';
      readonly path: string;
      readonly errors: readonly string[];
      readonly products: number;
      readonly clusters: number;
    }
  | { readonly kind: 'list'; readonly path: string; readonly errors: readonly string[]; readonly entries: number };

/** Top-level keys only a routes file has (address-books/bfe/routing-table.ts). */
const ROUTES_KEYS = ['products', 'clusters', 'conditions', 'defaultProduct'];

/** Whether `raw` looks like a routes file rather than a router config. */
function isRoutesFile(raw: unknown): raw is Record<string, unknown> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return false;
  const keys = Object.keys(raw);
  return !keys.includes('listeners') && keys.length > 0 && keys.every((k) => ROUTES_KEYS.includes(k));
}

/** Whether `raw` looks like a `file` book's list (`- { host, backends }`). */
function isServerList(raw: unknown): raw is unknown[] {
  return (
    Array.isArray(raw) &&
    raw.length > 0 &&
    raw.every((e) => e !== null && typeof e === 'object' && 'host' in e && 'backends' in e)
  );
}

/** Checks `file` in one pass; an unexpected error (a bug) is thrown. */
export async function checkConfigFile(file: string): Promise<CheckResult> {
  let read: Awaited<ReturnType<typeof readConfigFile>>;
  try {
    read = await readConfigFile(file);
  } catch (e) {
    const errors = e instanceof ConfigError ? [...e.errors] : problemLines(e as Error);
    return { kind: 'config', path: file, errors, skipped: [], warnings: [], down: false };
  }
  if (isRoutesFile(read.raw)) return checkRoutesFile(read.path, read.raw);
  if (isServerList(read.raw)) return checkServerList(read.path, read.raw.length);
  const parts = await inspectConfig(read.raw, read.path);
  const errors = [...parts.errors];
  const skipped = [...parts.skipped];
  /** Whether a check reading `needs` can run; if not, the line saying why is kept. */
  const can = (what: string, needs: readonly Section[]): boolean => {
    const why = unmet(what, needs, parts.bad);
    if (why !== undefined) skipped.push(why);
    return why === undefined;
  };
  const written = rawListeners(read.raw);
  let tls: EngineTls | undefined;
  if (!parts.bad.has('listeners')) {
    try {
      tls = await buildEngineTls(parts.config.listeners, parts.dir, read.path);
    } catch (e) {
      errors.push(...linesOf(e));
    }
  } else if (written.some((l) => 'certificates' in l)) can('listener certificates not read', ['listeners']);
  const acme = written.some((l) => 'acme' in l);
  const fleet = mapping(mapping(read.raw)?.fleet);
  if (acme || fleet?.encryptionKey !== undefined || fleet?.encryptionKeyFile !== undefined) {
    const what = acme ? 'acme sections not checked' : "the fleet's encryption key not checked";
    if (can(what, acme ? ['listeners', 'fleet'] : ['fleet']))
      errors.push(...(await checkAcme({ config: parts.config, dir: parts.dir })));
  }
  let down = false;
  const warnings: string[] = parts.loaded === undefined ? [] : loadedPolicyWarnings(parts.loaded);
  if (parts.addressBook !== undefined) {
    const config = parts.loaded?.config;
    const inspect = (book: AddressBook) => {
      if (config !== undefined) warnings.push(...h2cAllowWarnings(config, book));
    };
    const built = await dryBuild(parts.addressBook, parts.dir, read.path, tls, inspect);
    // Only a store that did not answer: not an invalid config, a runtime failure (exit 1).
    down = built.down && errors.length === 0;
    errors.push(...built.errors);
  } else can('address book not built', ['addressBook']);
  return { kind: 'config', path: read.path, errors: [...new Set(errors)], skipped, warnings, down };
}

/** The listeners as written, each a mapping (for which further checks apply when they are not valid). */
function rawListeners(raw: unknown): Record<string, unknown>[] {
  const list = mapping(raw)?.listeners;
  if (!Array.isArray(list)) return [];
  return list.flatMap((l: unknown) => {
    const m = mapping(l);
    return m === undefined ? [] : [m];
  });
}

/** Starts and closes the address book once (nothing listens); returns its problems. */
async function dryBuild(
  addressBook: { factory: AddressBookFactory; options: unknown },
  dir: string,
  file: string,
  tls: EngineTls | undefined,
  inspect?: (book: AddressBook) => void,
): Promise<{ errors: string[]; down: boolean }> {
  const context = {
    configDir: dir,
    registry: new LocalRegistry(),
    logger: createLogger('silent'),
    random: defaultRandom,
  };
  let book: ReturnType<AddressBookFactory['create']> | undefined;
  try {
    book = addressBook.factory.create(addressBook.options, context);
    await book.start();
    checkUpstreamTls(tls ?? { listeners: new Map(), upstream: new UpstreamTls(dir), issued: undefined }, book, file);
    inspect?.(book);
    return { errors: [], down: false };
  } catch (e) {
    return { errors: linesOf(e), down: storeDown(e as Error) };
  } finally {
    await book?.close().catch(() => {});
  }
}

/** The problem lines of an expected error; anything else is rethrown (a bug). */
function linesOf(e: unknown): string[] {
  if (e instanceof ConfigError) return [...e.errors];
  if (isSwitchboardError(e)) return problemLines(e);
  throw e;
}

/** A routes file: compiled with the bfe book. */
async function checkRoutesFile(path: string, raw: Record<string, unknown>): Promise<CheckResult> {
  const bfe = await resolveAddressBook('bfe', '/');
  const { errors } = await dryBuild({ factory: bfe, options: { routes: path } }, '/', path, undefined);
  const n = (k: string) => Object.keys((raw[k] as object | undefined) ?? {}).length;
  return { kind: 'routes', path, errors, products: n('products'), clusters: n('clusters') };
}

/** A `file` book's list: loaded with the file book. */
async function checkServerList(path: string, entries: number): Promise<CheckResult> {
  const file = await resolveAddressBook('file', '/');
  const { errors } = await dryBuild({ factory: file, options: { path, watch: false } }, '/', path, undefined);
  return { kind: 'list', path, errors, entries };
}
