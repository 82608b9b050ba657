/**
 * A config file opened for `switchboard route` (cli/route.ts): loaded and validated, its
 * address book and operator started as a router would start them, nothing listening, so that
 * explain/explain.ts can ask them about one request. An address book that fails to start is a
 * config problem (`addressBook: <message>`).
 */
import { createLogger } from '../src/base/log.ts';
import { defaultRandom } from '../src/base/random.ts';
import { ConfigError } from '../src/config/errors.ts';
import type { OperatorInstance } from '../src/contracts/plugin.ts';
import type { AddressBook } from '../src/contracts/types.ts';
import type { LoadedConfig } from '../src/panel/contract.ts';
import { LocalRegistry } from '../src/registry/local.ts';
import { loadConfig } from './load-config.ts';

/** A config's book and operator, started; `close` stops both. */
export interface OpenedConfig {
  readonly loaded: LoadedConfig;
  readonly book: AddressBook;
  readonly operator: OperatorInstance;
  close(): Promise<void>;
}

/** Loads `file` and starts its book and operator; config problems throw ConfigError. */
export async function openConfig(file: string): Promise<OpenedConfig> {
  const loaded = await loadConfig(file);
  const context = {
    configDir: loaded.dir,
    registry: new LocalRegistry(),
    logger: createLogger('silent'),
    random: defaultRandom,
  };
  const book = loaded.addressBook.factory.create(loaded.addressBook.options, context);
  try {
    await book.start();
  } catch (e) {
    await book.close().catch(() => {});
    throw new ConfigError(loaded.file, [`addressBook: ${(e as Error).message}`]);
  }
  const operator = loaded.operator.factory.create(loaded.operator.options, context);
  await operator.start?.();
  return {
    loaded,
    book,
    operator,
    async close() {
      await operator.close?.();
      await book.close();
    },
  };
}
