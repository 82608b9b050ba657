/**
 * Loaded with `node --import ./test/harness/module-probe.mjs …`: writes one line
 * `module-probe: loaded <package>` to stderr the first time a module of a watched package
 * (`SWB_PROBE_PACKAGES`, comma-separated, e.g. `etcd3,redis`) is resolved, by `import` or
 * `require`. Tests use it to show that a feature not configured loads none of its modules.
 */
import { registerHooks } from 'node:module';

const watched = (process.env.SWB_PROBE_PACKAGES ?? '').split(',').filter((p) => p !== '');
const seen = new Set();

registerHooks({
  resolve(specifier, context, next) {
    const result = next(specifier, context);
    for (const name of watched) {
      if (!seen.has(name) && result.url.includes(`/node_modules/${name}/`)) {
        seen.add(name);
        process.stderr.write(`module-probe: loaded ${name}\n`);
      }
    }
    return result;
  },
});
