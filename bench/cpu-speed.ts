/**
 * Watches how fast each CPU runs: `node bench/cpu-speed.ts [--every 1] [--count 30]` prints, every
 * `--every` seconds, the wall milliseconds one fixed loop takes on each CPU (lib/cpu-speed.ts)
 * and the slowest over the fastest. Run it on a quiet machine before trusting a bench run: on
 * equal CPUs the columns agree; bench/README.md "Two vCPUs, two speeds" shows a machine where
 * they do not.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { cpuSpeeds, spread } from './lib/cpu-speed.ts';
import { allowedCpus, cpuNumbers } from './lib/pin.ts';

const { values } = parseArgs({
  options: { every: { type: 'string', default: '1' }, count: { type: 'string', default: '30' } },
});
const every = Number(values.every);
const count = Number(values.count);
if (!(every > 0) || !Number.isInteger(count) || count < 1) throw new Error('cpu-speed: --every > 0, --count ≥ 1');

// The CPUs cpuSpeeds visits, in its order (this process's allowed list).
const cpus = cpuNumbers(allowedCpus() ?? '0');
for (let i = 0; i < count; i++) {
  const ms = cpuSpeeds();
  if (ms === undefined) {
    console.log('cpu-speed: needs Linux, taskset and more than one CPU');
    process.exit(1);
  }
  if (i === 0) console.log(`time\t${cpus.map((c) => `cpu${c} ms`).join('\t')}\tslowest/fastest`);
  console.log(`${new Date().toISOString().slice(11, 19)}\t${ms.join('\t')}\t${spread(ms)}`);
  if (i < count - 1) await sleep(every * 1000);
}
