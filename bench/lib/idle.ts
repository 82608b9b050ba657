/**
 * The idle scenario: open N keep-alive connections through a target, send one request on each
 * and read its answer, then hold them all open and measure how much the target's resident
 * memory grew per connection.
 *
 * 1. Warm the target with a few hundred connections, then wait until its RSS (process tree)
 *    stops moving (a fresh Node process sheds startup memory for a while); read it.
 * 2. Open N connections, `BATCH` at a time; each sends GET /small and waits for the answer.
 * 3. Settle, read RSS again; (after - before) / N is the growth per held connection.
 */
import { connect, type Socket } from 'node:net';
import { treeRssKiB } from './proc.ts';
import { SMALL_BODY, SMALL_PATH } from './scenarios-shared.ts';

const BATCH = 200;
const SETTLE_MS = 1_500;
const REQUEST = Buffer.from(`GET ${SMALL_PATH} HTTP/1.1\r\nHost: bench.test\r\n\r\n`);

const WARM = 400;
const STABLE_KIB = 512;
const STABLE_LIMIT_MS = 20_000;

/** Polls RSS until three reads in a row move less than STABLE_KIB (bounded). */
async function stableRss(pids: number[]): Promise<number> {
  const until = Date.now() + STABLE_LIMIT_MS;
  let last = treeRssKiB(pids);
  let calm = 0;
  while (calm < 3 && Date.now() < until) {
    await new Promise((r) => setTimeout(r, SETTLE_MS / 3));
    const now = treeRssKiB(pids);
    calm = Math.abs(now - last) < STABLE_KIB ? calm + 1 : 0;
    last = now;
  }
  return last;
}

function openOne(port: number, sockets: Socket[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = connect({ port, host: '127.0.0.1', noDelay: true });
    sockets.push(s);
    let seen = '';
    const onData = (c: Buffer) => {
      seen += c.toString('latin1');
      if (seen.endsWith(SMALL_BODY)) {
        s.removeListener('data', onData);
        resolve();
      }
    };
    s.on('data', onData);
    s.once('error', reject);
    s.once('close', () => reject(new Error('bench: idle connection closed early')));
    s.write(REQUEST);
  });
}

/** Holds `count` connections to `port`; returns RSS growth per connection in KiB. */
export async function measureIdle(port: number, pids: () => number[], count: number): Promise<number> {
  const sockets: Socket[] = [];
  try {
    const warm: Socket[] = [];
    for (let i = 0; i < WARM; i += BATCH) await Promise.all(Array.from({ length: BATCH }, () => openOne(port, warm)));
    for (const s of warm) s.destroy();
    const before = await stableRss(pids());
    for (let done = 0; done < count; done += BATCH) {
      const batch = [];
      for (let i = done; i < Math.min(count, done + BATCH); i++) batch.push(openOne(port, sockets));
      await Promise.all(batch);
    }
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const after = treeRssKiB(pids());
    return (after - before) / count;
  } finally {
    for (const s of sockets) {
      s.removeAllListeners('close');
      s.on('error', () => {});
      s.destroy();
    }
  }
}
