// `switchboard` run from an npm install (the package under node_modules), before any .ts loads:
// Node will not strip types there, so `strip-types.js` does it for this package's files. It must
// run in every thread, and worker threads (the worker panel, big address-list loads) inherit the
// process's node arguments, not a hook registered at run time: so the process replaces itself
// once (`process.execve`: same pid, same descriptors, before anything is listening) with the same
// command under `--import <strip-types.js>`. Without execve (Windows, an old Node) or under the
// inspector (re-executing would end its session) the hook is registered in this thread only:
// everything runs but the worker panel and the worker that loads a big `block` list.
const HOOK = new URL('./strip-types.js', import.meta.url).href;
const INSPECTOR = /^--inspect(-brk|-wait)?(=|$)/;

const preloaded = process.execArgv.some(
  (a, i) => a === `--import=${HOOK}` || (a === '--import' && process.execArgv[i + 1] === HOOK),
);
const inspected = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].some((a) =>
  INSPECTOR.test(a),
);

if (!preloaded && !inspected && typeof process.execve === 'function') {
  try {
    process.execve(
      process.execPath,
      [process.execPath, '--import', HOOK, ...process.execArgv, ...process.argv.slice(1)],
      process.env,
    );
  } catch (err) {
    process.stderr.write(
      `switchboard: could not re-execute with the type-stripping hook (${err.message}); worker threads will not load\n`,
    );
  }
}
await import(HOOK);
