// Node strips TypeScript types natively, but never under node_modules
// (ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING). Switchboard ships its TypeScript sources, so an
// npm install of the package needs this: a module hook, in this thread, that strips the types of
// this package's own .ts files with Node's own stripper (the same erasable-only syntax the checkout
// runs with: tsconfig `erasableSyntaxOnly`). Other files, a user's plugin included, are left to Node.
//
// Loaded by `bin/installed.js` as `--import` (so every worker thread registers it too), and by
// anyone who imports `switchboard/plugin` outside the router: `node --import switchboard/register`.
import { readFileSync } from 'node:fs';
import { registerHooks, stripTypeScriptTypes } from 'node:module';
import { fileURLToPath } from 'node:url';

const ROOT = new URL('../', import.meta.url).href;

// stripTypeScriptTypes warns once per thread that it is experimental; the warning is written to
// stderr, where a router's JSON log goes. It is taken here, on an empty string, and not shown.
const emitWarning = process.emitWarning;
process.emitWarning = () => {};
try {
  stripTypeScriptTypes('');
} finally {
  process.emitWarning = emitWarning;
}

registerHooks({
  load(url, context, nextLoad) {
    if (!url.startsWith(ROOT) || !url.endsWith('.ts') || url.startsWith(`${ROOT}node_modules/`)) {
      return nextLoad(url, context);
    }
    const source = stripTypeScriptTypes(readFileSync(fileURLToPath(url), 'utf8'), { sourceUrl: url });
    return { format: 'module', source, shortCircuit: true };
  },
});
