/**
 * The fleet counters' Redis side (issue 43 item 3) on node-redis (`redis`, loaded only with
 * `fleet.redis`): the `LimitsTransport` of limits-store.ts.
 *
 * 1. One client, connected in the background: a router starts (and serves) while Redis is
 *    down; the client reconnects on its own (every 50–500 ms) for as long as it runs.
 * 2. `disableOfflineQueue`: while the socket is down a command fails at once instead of
 *    queueing, so a sync fails fast and the store falls back (never a queue of stale reports).
 * 3. A sync is its script calls written together: node-redis pipelines the commands issued in
 *    one tick into one write, so one round trip. EVALSHA by the scripts' SHA-1; after a Redis
 *    restart (empty script cache) a NOSCRIPT reply loads both scripts and the sync runs again.
 */
import { createHash } from 'node:crypto';
import { createClient } from 'redis';
import type { Logger } from '../../src/base/log.ts';
import { IN_FLIGHT_SCRIPT, RATE_SCRIPT } from './limits-scripts.ts';
import type { LimitsTransport } from './limits-store.ts';
import type { LimitsScript, SyncCall } from './limits-sync.ts';

const SOURCES: Readonly<Record<LimitsScript, string>> = { rate: RATE_SCRIPT, inFlight: IN_FLIGHT_SCRIPT };
const SHAS: Readonly<Record<LimitsScript, string>> = {
  rate: createHash('sha1').update(RATE_SCRIPT).digest('hex'),
  inFlight: createHash('sha1').update(IN_FLIGHT_SCRIPT).digest('hex'),
};

/** The transport on the Redis at `url`. */
export function redisTransport(url: string, logger: Logger): LimitsTransport {
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: 1000, reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 500) },
  });
  // Every failure shows up as a failed sync (and one log line per change, limits-store.ts).
  client.on('error', (e: unknown) => logger.debug({ err: (e as Error).message }, 'fleet limits: redis client'));
  const load = () => Promise.all(Object.values(SOURCES).map((s) => client.sendCommand(['SCRIPT', 'LOAD', s])));
  // Loaded on each (re)connection, so a sync seldom meets NOSCRIPT (a Redis restarted empty).
  client.on('ready', () => void load().catch(() => undefined));
  const connecting = client.connect().catch(() => undefined);
  const send = (calls: readonly SyncCall[]): Promise<(readonly [string, string])[]> =>
    Promise.all(
      calls.map(
        (c) =>
          client.sendCommand(['EVALSHA', SHAS[c.script], '1', c.key, ...c.args]) as Promise<readonly [string, string]>,
      ),
    );
  return {
    async run(calls) {
      try {
        return await send(calls);
      } catch (e) {
        if (!(e instanceof Error) || !e.message.startsWith('NOSCRIPT')) throw e;
        await load();
        return send(calls);
      }
    },
    async ping() {
      await client.sendCommand(['PING']);
    },
    async close() {
      await connecting;
      if (client.isOpen) client.destroy();
    },
  };
}
