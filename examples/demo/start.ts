/**
 * `npm start`: the demo backends plus the router on the default config (conf/switchboard.yaml).
 * Then try, in another terminal:
 *   curl -H 'Host: www.example.test' localhost:8080/
 *   curl -H 'Host: www.example.test' localhost:8080/static/app.css
 *   curl -H 'Host: shop.example.test' localhost:8080/api/orders
 *   curl -H 'Host: shop.example.test' -H 'X-Canary: 1' localhost:8080/
 */
import { fileURLToPath } from 'node:url';
import { reportError } from '../../app/exit.ts';
import { runStart } from '../../app/run-start.ts';
import { DEMO_BACKENDS, startDemoBackends } from './backends.ts';

// A port in use or a bad config: one line and the CLI's exit code (app/exit.ts), no stack.
try {
  await startDemoBackends();
  process.stderr.write(`demo backends: ${DEMO_BACKENDS.map(([n, p]) => `${n} on 127.0.0.1:${p}`).join(', ')}\n`);
  // DEMO_CONFIG: another config for the same demo (the quick-start test runs it on free ports).
  await runStart(process.env.DEMO_CONFIG ?? fileURLToPath(new URL('../../conf/switchboard.yaml', import.meta.url)), {});
} catch (e) {
  process.exit(reportError(e));
}
