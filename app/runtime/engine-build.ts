/**
 * Building one engine from a loaded config, and closing it (STYLE §5: create → start → close,
 * reverse order on failure):
 *
 *   LoadedConfig ──► certificates (src/tls) ──► policies compile/start ──► book.create/start
 *                      ──► upstream TLS check ──► operator.create/start ──► Engine (frozen)
 *
 * The policies compile on the counters of the set they replace (engine-policies.ts), so an
 * unchanged rule keeps its state across a reload; `closeEngine` closes them last.
 */
import { createHash } from 'node:crypto';
import type { FileWatcher } from '../../src/base/file-watch.ts';
import type { PluginContext } from '../../src/contracts/plugin.ts';
import type { Engine, LoadedConfig } from '../../src/panel/contract.ts';
import type { PolicySet } from '../../src/policy/index.ts';
import { watchCertificateFiles } from '../../src/tls/cert-watch.ts';
import { buildEngineTls, checkUpstreamTls } from '../../src/tls/engine-tls.ts';
import type { IssuedCertificates } from '../../src/tls/issued.ts';
import { compileEnginePolicies, localCounting, type PolicyCounting } from './engine-policies.ts';

/** How an engine's policies get their counters: the set it replaces, and where counters live. */
export interface EnginePolicies {
  readonly previous?: PolicySet | undefined;
  readonly counting?: PolicyCounting;
}

/** Certificate file watchers by engine; they stop when the engine closes. */
const watchers = new WeakMap<Engine, FileWatcher>();

/** Builds and starts an engine; on failure, closes what was started (reverse order). */
export async function buildEngine(
  loaded: LoadedConfig,
  context: PluginContext,
  issued?: IssuedCertificates,
  policyCounters: EnginePolicies = {},
): Promise<Engine> {
  // Certificates first: a bad file is a config error before anything has started.
  const tls = await buildEngineTls(loaded.config.listeners, loaded.dir, loaded.file, issued);
  const policies = compileEnginePolicies(
    loaded,
    policyCounters.previous,
    policyCounters.counting ?? localCounting,
    context.logger,
  );
  await policies.start(context.logger);
  const book = loaded.addressBook.factory.create(loaded.addressBook.options, context);
  const operator = loaded.operator.factory.create(loaded.operator.options, context);
  try {
    await book.start();
  } catch (e) {
    await policies.close();
    throw e;
  }
  try {
    checkUpstreamTls(tls, book, loaded.file);
    await operator.start?.();
  } catch (e) {
    await book.close();
    await policies.close();
    throw e;
  }
  const hash = createHash('sha256').update(loaded.text).digest('hex').slice(0, 12);
  const engine: Engine = Object.freeze({
    loaded,
    limits: loaded.config.limits,
    book,
    operator,
    version: `${hash}@${new Date().toISOString()}`,
    tls,
    policies,
  });
  // Certificates renewed on disk replace theirs in this engine's stores (src/tls/cert-watch.ts).
  if (tls.listeners.size > 0) watchers.set(engine, watchCertificateFiles(loaded.config.listeners, tls, context.logger));
  return engine;
}

/** Stops an engine's plugins (operator first, then the book, then the policies: reverse of start). */
export async function closeEngine(engine: Engine): Promise<void> {
  watchers.get(engine)?.close();
  watchers.delete(engine);
  await engine.operator.close?.();
  await engine.book.close();
  await engine.policies.close();
}
