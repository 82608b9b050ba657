/**
 * `switchboard check`: validate a config (schema, plugins and their options, TLS material, `acme:`
 * sections (app/acme/check.ts), then a
 * dry build of the address book so cross-file errors show) and print every error with its path.
 */

import { checkAcme } from '../app/acme/check.ts';
import { loadConfig } from '../app/load-config.ts';
import { ConfigError } from '../src/config/errors.ts';
import { isSwitchboardError } from '../src/errors.ts';
import { LocalRegistry } from '../src/local-registry.ts';
import { createLogger } from '../src/log.ts';
import { defaultRandom } from '../src/random.ts';
import { buildEngineTls, checkUpstreamTls } from '../src/tls/engine-tls.ts';

/** Returns the exit code: 0 valid, 1 invalid. */
export async function runCheck(file: string): Promise<number> {
  try {
    const loaded = await loadConfig(file);
    const context = {
      configDir: loaded.dir,
      registry: new LocalRegistry(),
      logger: createLogger('warn'),
      random: defaultRandom,
    };
    const tls = await buildEngineTls(loaded.config.listeners, loaded.dir, loaded.file);
    const acmeErrors = await checkAcme(loaded);
    if (acmeErrors.length > 0) throw new ConfigError(loaded.file, acmeErrors);
    const book = loaded.addressBook.factory.create(loaded.addressBook.options, context);
    await book.start();
    try {
      checkUpstreamTls(tls, book, loaded.file);
    } finally {
      await book.close();
    }
    process.stdout.write(`config ${loaded.file}: ok\n`);
    return 0;
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`${e.message}\n`);
      return 1;
    }
    if (isSwitchboardError(e)) {
      process.stderr.write(`config ${file}: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}
