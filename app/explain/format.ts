/**
 * A routing explanation (explain.ts) as lines of text: what `switchboard route` prints without
 * `--json` and what the dashboard's explain form shows (`POST /explain` `text`).
 *
 * 1. The request as the data plane sees it, the product, the book's steps, the cluster.
 * 2. Each sub-cluster's backends: offline on one line (configured weights), live one line each
 *    with `takes traffic` or `skipped: <why>` (backends.ts).
 * 3. The backend attempt 1 picks (or why none), then whose backend state that is: `assumed:`
 *    offline, a `note:` when the live answer differs from the all-healthy one.
 * 4. The `policies:` lines (policies.ts).
 */
import type { ExplainedBackend, ExplainedCluster } from './backends.ts';
import type { RouteExplanation } from './explain.ts';
import { formatPolicies } from './policies.ts';

/** The line `switchboard route` prints offline (the answer assumes every backend healthy). */
export const ASSUMED =
  'assumed: every backend healthy at its configured weight (offline; --admin URL asks the running router)';

function label(b: ExplainedBackend): string {
  return `${b.name === b.id ? b.id : `${b.name}=${b.id}`} w${b.weight}`;
}

/** Step 2, one live backend. */
function liveLine(b: ExplainedBackend): string {
  if (!b.takesTraffic) return `    ${label(b)}: skipped: ${b.why ?? 'takes no traffic'}`;
  return `    ${label(b)}: takes traffic${b.why === undefined ? '' : `; ${b.why}`}`;
}

/** Steps 1–2 for the cluster. */
function clusterLines(c: ExplainedCluster, rule: string | undefined, live: boolean): string[] {
  const lines = [
    `cluster: ${c.name} (rule ${rule}, balance ${c.balance}, retries ${c.retries}, crossRetries ${c.crossRetries})`,
  ];
  for (const s of c.subclusters) {
    const head = `  subcluster ${s.name} weight ${s.weight}:`;
    if (s.backends.length === 0) lines.push(`${head} (no backends)`);
    else if (live) lines.push(head, ...s.backends.map(liveLine));
    else lines.push(`${head} ${s.backends.map(label).join(', ')}`);
  }
  return lines;
}

function requestLine(r: RouteExplanation['request']): string {
  const client = `client ${r.clientIp}${r.sni ? ` sni ${r.sni}` : ''}${r.vip ? ` vip ${r.vip}` : ''}`;
  if (r.protocol === 'tls') {
    return `request: tls sni ${r.sni ?? '(none)'} client ${r.clientIp}${r.vip ? ` vip ${r.vip}` : ''} listener ${r.listener}`;
  }
  const port = r.port === undefined ? '' : ` port ${r.port}`;
  return `request: host ${r.host || '(none)'}${port} path ${r.path ?? '(none)'} method ${r.method} ${client} listener ${r.listener}`;
}

/** The explanation as lines of text (`switchboard route` without `--json`). */
export function formatRouteExplanation(e: RouteExplanation): string {
  const r = e.request;
  const live = e.backendState === 'live';
  const lines = [requestLine(r)];
  if (e.product !== undefined) lines.push(`product: ${e.product.name}${e.product.how ? ` (${e.product.how})` : ''}`);
  lines.push(...e.steps);
  if (e.rule !== undefined && e.steps.length === 0) lines.push(`rule: ${e.rule.where}`);
  if (e.cluster !== undefined) lines.push(...clusterLines(e.cluster, e.rule?.where, live));
  if (e.chosen !== undefined) {
    lines.push(`chosen: ${e.chosen.backend} in subcluster ${e.chosen.subcluster} (attempt 1, client ${r.clientIp})`);
  } else lines.push(`no route: ${e.reason}`);
  if (!live && e.cluster !== undefined) lines.push(ASSUMED);
  if (e.allHealthy !== undefined) lines.push(`note: ${e.allHealthy.note}`);
  lines.push(...formatPolicies(e.policies));
  return `${lines.join('\n')}\n`;
}
