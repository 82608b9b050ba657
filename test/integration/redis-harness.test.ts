/**
 * The Redis test harness (test/harness/redis.ts) with the `redis` client the fleet's limits use:
 * a real redis-server answers, stops (the client's command fails), and restarts on the same port
 * (the same client reconnects and works again, without the data: no persistence).
 */
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisBinary, startRedis, type TestRedis } from '../harness/redis.ts';
import { eventually } from '../harness/router.ts';

describe.skipIf(redisBinary() === undefined)('test harness: redis-server', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.close();
  });

  it('answers, fails while stopped, and answers again after a restart on the same port', async () => {
    // No offline queue: a command while disconnected fails at once instead of waiting for the restart.
    const client = createClient({ url: redis.url, disableOfflineQueue: true, socket: { reconnectStrategy: () => 50 } });
    client.on('error', () => undefined);
    await client.connect();
    try {
      expect(await client.incr('n')).toBe(1);
      expect(await client.incr('n')).toBe(2);
      await redis.stop();
      await expect(client.incr('n')).rejects.toThrow();
      await redis.restart();
      await eventually(async () => client.isReady, 10_000, 'the client to reconnect');
      expect(await client.incr('n')).toBe(1);
    } finally {
      client.destroy();
    }
  });
});
