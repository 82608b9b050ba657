/**
 * `npm run bench -- --help`: the groups with their scenarios and targets, the suites, the flags
 * and the environment, read from the same tables the run uses.
 */
import { GROUPS } from './lib/groups.ts';
import { SCENARIOS } from './lib/scenarios.ts';

/** The help text; `suites` are the names `--suite` accepts. */
export function benchHelp(suites: readonly string[]): string {
  const groups = GROUPS.map((g) => {
    const scenarios = SCENARIOS.filter((s) => (s.group ?? 'http1') === g.name).map((s) => `${s.name} (${s.title})`);
    const targets = g.targets.map((t) => (t.optional ? `${t.name}*` : t.name));
    return `  ${g.name}\n    scenarios: ${scenarios.join(', ')}\n    targets:   ${targets.join(', ')}`;
  });
  return `Usage: npm run bench -- [flags]

Every selected scenario on every available target, interleaved over several rounds; prints a
table of medians with ratios and writes results.json and chart.svg. A missing peer (nginx,
HAProxy, wrk…) is skipped with a line saying why.

Groups (a group runs when one of its scenarios is selected; * = optional target, only when
named in --targets or in a suite that lists it):
${groups.join('\n')}

Flags:
  --duration S       seconds per measurement (default 5)
  --warmup S         seconds of each scenario on each target before the rounds
                     (default: 5 for newconn and tlsconn, 1 for the others;
                     times the thread count for the worker panel's rows)
  --preroll S        seconds of the same load, unmeasured, on the target right
                     before each measurement (default 1; times the thread count;
                     0: none): a target idle while the others ran starts slow
  --rounds N         rounds of every scenario × target (default 3)
  --paired           measure the pivot (node-pipe; node-h2-proxy for h2) right before every
                     other row; its ratio column (and --check) is then the median of those
                     per-round ratios (a rule between two paired rows: their quotient)
  --scenarios a,b    only these scenarios
  --targets a,b      only these targets (optional ones included when named)
  --suite NAME       ${suites.join(' | ')} (--scenarios/--targets override it)
  --idle N           idle connections for the idle scenario (default 4000)
  --loadgen NAME     wrk | autocannon (default: wrk when installed)
  --backend NAME     nginx | node (default: nginx when installed)
  --out DIR          where results go (default bench/results; "none" writes nothing)
  --profile          Node targets run with --cpu-prof into OUT/profiles
  --check            judge the run against bench/targets.json: exit 1 when a row regresses
                     past its guard by more than the file's noise
  --strict           with --check: exit 1 on a missed goal too
  --margin M         with --check: the tolerance (a fraction) instead of the file's noise
  --targets-file F   with --check: another targets file
  --quick            the short check CI runs: the rows the rules name, keepalive, newconn,
                     big and h2, 3 rounds × 2 s, margin 0.5, nothing written
  -h, --help         this text

Environment:
  SWB_BENCH_BASELINE=DIR   also measure the Switchboard tree at DIR (rows "…@baseline")

Examples:
  npm run bench -- --duration 2 --rounds 1 --scenarios keepalive --targets direct,switchboard-net
  npm run bench -- --suite scaling --out none
  npm run bench -- --check            # a full run judged against bench/targets.json
`;
}
