/** The `worker` panel (README.md in this folder). */
export { engineOf, type WorkerOptions, workerOptions } from './options.ts';
export { bookSpecOf, type WorkerPanel, workerPanel } from './panel.ts';
export { checkReusePort, supportsReusePort } from './support.ts';
