/** The `worker` panel (README.md in this folder). */
export { bookSpecOf, type WorkerPanel, workerPanel } from './panel.ts';
export { checkReusePort, supportsReusePort } from './support.ts';
