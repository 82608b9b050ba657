/**
 * The floor experiment of issue 18 (h2 against nginx): named tunings of `node-h2-proxy` that an
 * operator could set (node:http2 options, a V8 flag), each started as its own target
 * `node-h2-proxy+NAME` by `node bench/h2-cost.ts --tunings NAME,…`. The untuned row stays as is.
 *
 *   none     no tuning (an A/A check of the untuned row, started the same way)
 *   win      16 MiB session windows and 1 MiB stream windows (SETTINGS_INITIAL_WINDOW_SIZE) both sides
 *   hpack    64 KiB HPACK tables (SETTINGS_HEADER_TABLE_SIZE) both sides
 *   limits   maxSessionMemory 100 MB, peerMaxConcurrentStreams 1000, maxOutstandingPings 100
 *   pool4    four upstream sessions, round-robin (instead of one)
 *   semi     `--max-semi-space-size=64` (a young generation twice node 24's default of 32 MiB
 *            semi-spaces on this machine: fewer scavenges)
 *   all      every one of the above
 *
 * Not here, because there is nothing to gain: `paddingStrategy` defaults to none (the others add
 * bytes), sockets already have `noDelay`, node already writes a session's frames once per loop
 * turn (its native side coalesces them), and http2 streams take no `highWaterMark`.
 */
import { join } from 'node:path';
import { startNode } from './targets.ts';
import type { Target } from './types.ts';

interface Tuning {
  readonly json: Record<string, unknown>;
  readonly flags: readonly string[];
}

const MIB = 1024 * 1024;
const win = {
  server: { settings: { initialWindowSize: MIB } },
  client: { settings: { initialWindowSize: MIB } },
  windowBytes: 16 * MIB,
};
const hpack = { server: { settings: { headerTableSize: 65536 } }, client: { settings: { headerTableSize: 65536 } } };
const limits = {
  server: { maxSessionMemory: 100, maxOutstandingPings: 100 },
  client: { maxSessionMemory: 100, maxOutstandingPings: 100, peerMaxConcurrentStreams: 1000 },
};
const SEMI = ['--max-semi-space-size=64'];

export const H2_TUNINGS: Readonly<Record<string, Tuning>> = {
  none: { json: {}, flags: [] },
  win: { json: win, flags: [] },
  hpack: { json: hpack, flags: [] },
  limits: { json: limits, flags: [] },
  pool4: { json: { sessions: 4 }, flags: [] },
  semi: { json: {}, flags: SEMI },
  all: {
    json: {
      server: { ...limits.server, settings: { ...win.server.settings, ...hpack.server.settings } },
      client: { ...limits.client, settings: { ...win.client.settings, ...hpack.client.settings } },
      windowBytes: win.windowBytes,
      sessions: 4,
    },
    flags: SEMI,
  },
};

/** The target `node-h2-proxy+NAME`. */
export function tunedFloor(name: string, here: string): Target {
  const t = H2_TUNINGS[name];
  if (t === undefined) throw new Error(`unknown tuning ${name} (known: ${Object.keys(H2_TUNINGS).join(', ')})`);
  return {
    name: `node-h2-proxy+${name}`,
    available: () => undefined,
    start: (ctx) =>
      startNode(
        { ...ctx, nodeFlags: [...ctx.nodeFlags, ...t.flags] },
        `node-h2-proxy+${name}`,
        join(here, 'h2-proxy-server.ts'),
        (p) => [String(p), String(ctx.backendPort), JSON.stringify(t.json)],
      ),
  };
}
