/**
 * The tracing rows (issue 44, Cost): a per-request router with `tracing:` at ratio 0.01 and 1.0,
 * exporting OTLP/HTTP protobuf to a loopback receiver in the bench's own process (it reads and
 * answers 200; its CPU is not the target's). Optional targets, run only when named:
 *
 *   node bench/cost.ts --paired --scenarios keepalive --targets switchboard-per-request,\
 *     switchboard-per-request-tracing-0.01,switchboard-per-request-tracing-1 \
 *     --versus switchboard-per-request
 *
 * The bench's requests carry no `traceparent`, so the ratio decides; `-tracing-0` shows the
 * fixed cost (the hooks, the sampling draw, the upstream channels) with nothing sampled.
 * `switchboard-per-request` (no `tracing:`) is the row they are measured against.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { switchboardConf, switchboardServers } from './peers.ts';
import { startSwitchboard } from './targets.ts';
import type { Target } from './types.ts';

/** A per-request router tracing `ratio` of its requests to a loopback OTLP receiver. */
export function tracingTarget(name: string, ratio: number): Target {
  return {
    name,
    optional: true,
    available: () => undefined,
    scenarios: ['keepalive', 'newconn'],
    start: async (ctx) => {
      const receiver = createServer((req, res) => {
        req.resume();
        req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
      });
      await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
      const port = (receiver.address() as AddressInfo).port;
      const tracing = `tracing: { endpoint: "http://127.0.0.1:${port}/v1/traces", sampler: { ratio: ${ratio} }, flushInterval: 1s }\n`;
      const running = await startSwitchboard(
        ctx,
        name,
        (p) => switchboardConf(p, 'per-request') + tracing,
        switchboardServers(ctx.backendPort),
      );
      return {
        port: running.port,
        pids: () => running.pids(),
        stop: async () => {
          await running.stop();
          receiver.closeAllConnections();
          await new Promise<void>((r) => receiver.close(() => r()));
        },
      };
    },
  };
}

/** The rows: ratio 0 (the fixed cost of the hooks, nothing sampled), 0.01 and 1. */
export const TRACING_TARGETS: readonly Target[] = [
  tracingTarget('switchboard-per-request-tracing-0', 0),
  tracingTarget('switchboard-per-request-tracing-0.01', 0.01),
  tracingTarget('switchboard-per-request-tracing-1', 1),
];
