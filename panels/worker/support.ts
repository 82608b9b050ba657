/**
 * `reusePort` listeners (SO_REUSEPORT) arrived in Node 22.12 / 23.1; without them every worker
 * would have to share one listening descriptor, which Node cannot close safely per thread.
 */
import { SwitchboardError } from '../../src/base/errors.ts';

/** True when `version` (like `24.22.3`) can listen with `reusePort`. */
export function supportsReusePort(version: string): boolean {
  const [major = 0, minor = 0] = version.split('.').map((n) => Number.parseInt(n, 10));
  return major >= 24 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12);
}

/** Throws SWB_ERR_CONFIG naming the Node version needed when this Node lacks `reusePort`. */
export function checkReusePort(version: string = process.versions.node): void {
  if (supportsReusePort(version)) return;
  throw new SwitchboardError(
    'SWB_ERR_CONFIG',
    `panel: worker needs Node >= 22.12 (listen with reusePort); this is Node ${version}`,
  );
}
