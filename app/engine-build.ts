/**
 * Building one engine from a loaded config, and closing it (STYLE §5: create → start → close,
 * reverse order on failure):
 *
 *   LoadedConfig ──► certificates (src/tls) ──► book.create/start ──► upstream TLS check
 *                                                └─► operator.create/start ──► Engine (frozen)
 */
import { createHash } from 'node:crypto';
import type { LoadedConfig } from '../src/config/loaded.ts';
import type { Engine } from '../src/engine.ts';
import type { PluginContext } from '../src/plugin.ts';
import { buildEngineTls, checkUpstreamTls } from '../src/tls/engine-tls.ts';

/** Builds and starts an engine; on failure, closes what was started (reverse order). */
export async function buildEngine(loaded: LoadedConfig, context: PluginContext): Promise<Engine> {
  // Certificates first: a bad file is a config error before anything has started.
  const tls = await buildEngineTls(loaded.config.listeners, loaded.dir, loaded.file);
  const book = loaded.addressBook.factory.create(loaded.addressBook.options, context);
  const operator = loaded.operator.factory.create(loaded.operator.options, context);
  await book.start();
  try {
    checkUpstreamTls(tls, book, loaded.file);
    await operator.start?.();
  } catch (e) {
    await book.close();
    throw e;
  }
  const hash = createHash('sha256').update(loaded.text).digest('hex').slice(0, 12);
  return Object.freeze({
    loaded,
    limits: loaded.config.limits,
    book,
    operator,
    version: `${hash}@${new Date().toISOString()}`,
    tls,
  });
}

/** Stops an engine's plugins (operator first, then the book: reverse of start). */
export async function closeEngine(engine: Engine): Promise<void> {
  await engine.operator.close?.();
  await engine.book.close();
}
