/**
 * Store-aware error text: the routing-table compiler names problems by config path
 * (`clusters.web.subclusters.dc1.backends[0].address`); a database or key-value store names
 * them by row or key (`backends(cluster=web, subcluster=dc1, address=x).address`). A `Labels`
 * map records, while the table is assembled, which row produced which path; `relabel` then
 * rewrites each problem of a compile error to its row.
 */
import { isSwitchboardError, SwitchboardError } from '../../src/base/errors.ts';

/** Config path prefix → row or key label, filled while a table is assembled from a store. */
export class Labels {
  readonly #map = new Map<string, string>();

  /** Records that `path` (and everything under it) came from `label`. */
  set(path: string, label: string): void {
    this.#map.set(path, label);
  }

  /** The label of the longest recorded prefix of `path`, with the rest of the path appended. */
  locate(path: string): string {
    let cut = path.length;
    while (cut > 0) {
      const label = this.#map.get(path.slice(0, cut));
      if (label !== undefined) return label + path.slice(cut);
      cut = Math.max(path.lastIndexOf('.', cut - 1), path.lastIndexOf('[', cut - 1));
    }
    return path;
  }
}

/** Rewrites a SWB_ERR_CONFIG from `compileRoutingTable` so every problem names its row; others pass through. */
export function relabel(e: unknown, labels: Labels, source: string): unknown {
  if (!isSwitchboardError(e) || e.code !== 'SWB_ERR_CONFIG') return e;
  const problems = e.message.split('; ').map((p) => {
    const colon = p.indexOf(': ');
    return colon < 0 ? p : `${labels.locate(p.slice(0, colon))}${p.slice(colon)}`;
  });
  const errors = problems.map((p) => `${source}: ${p}`);
  return Object.assign(new SwitchboardError('SWB_ERR_CONFIG', `${source}: ${problems.join('; ')}`, { cause: e }), {
    errors,
  });
}
