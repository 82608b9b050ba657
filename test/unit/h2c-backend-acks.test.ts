/**
 * `BackendAckFilter` (src/data-path/h2c-backend-acks.ts; issue 40 item 4): on an h2c splice the backend's
 * ACKs of what the router already answered are cut, whatever the read boundaries (RFC 9113
 * §6.5.3, §6.7); every other byte passes in order.
 */
import { describe, expect, it } from 'vitest';
import { BackendAckFilter } from '../../src/data-path/h2c-backend-acks.ts';
import { FLAG, FRAME } from '../../src/peek/h2-frames.ts';
import { frame } from '../fixtures/h2/build.ts';

const SETTINGS = frame(FRAME.SETTINGS, 0, 0, Buffer.from([0, 3, 0, 0, 0, 100]));
const ACK = frame(FRAME.SETTINGS, FLAG.ACK, 0);
const pingAck = (p: string) => frame(FRAME.PING, FLAG.ACK, 0, Buffer.from(p, 'latin1'));
const DATA = frame(FRAME.DATA, 0, 1, Buffer.from('a payload holding ACK-like bytes'));
const HEADERS = frame(FRAME.HEADERS, FLAG.END_HEADERS, 1, Buffer.from([0x88]));

const P1 = Buffer.from('first!!!', 'latin1');
const P2 = Buffer.from('second!!', 'latin1');

/** The backend's stream and what the client must get: 2 SETTINGS ACKs and the ACKs of P1, P2 owed. */
const stream = Buffer.concat([
  SETTINGS,
  ACK,
  HEADERS,
  pingAck('first!!!'),
  DATA,
  ACK,
  pingAck('other!!!'),
  pingAck('second!!'),
  ACK,
  DATA,
]);
const want = Buffer.concat([SETTINGS, HEADERS, DATA, pingAck('other!!!'), ACK, DATA]);

function run(pieces: Buffer[]): { out: Buffer; done: boolean } {
  const f = new BackendAckFilter(2, [P1, P2]);
  const out: Buffer[] = [];
  for (const p of pieces) out.push(f.push(Buffer.from(p)));
  const held = f.flush();
  if (held !== undefined) out.push(held);
  return { out: Buffer.concat(out), done: f.done };
}

describe('BackendAckFilter', () => {
  it('cuts the owed SETTINGS ACKs and PING ACKs (matching payloads, in order), passes the rest', () => {
    expect(run([stream])).toEqual({ out: want, done: true });
  });

  it('gives the same bytes at every split into two reads, and one byte per read', () => {
    for (let i = 1; i < stream.length; i++) {
      expect(run([stream.subarray(0, i), stream.subarray(i)]).out).toEqual(want);
    }
    expect(run(Array.from(stream, (_, i) => stream.subarray(i, i + 1))).out).toEqual(want);
  });

  it('owes nothing: done at once, chunks pass as they are', () => {
    const f = new BackendAckFilter(0, []);
    expect(f.done).toBe(true);
    expect(f.push(ACK)).toBe(ACK);
  });

  it('held bytes are copies: a reused read buffer does not change them', () => {
    const f = new BackendAckFilter(1, []);
    const read = Buffer.from(ACK.subarray(0, 5));
    expect(f.push(read).length).toBe(0);
    read.fill(0xff);
    expect(f.push(Buffer.concat([ACK.subarray(5), DATA]))).toEqual(DATA);
    expect(f.done).toBe(true);
  });
});
