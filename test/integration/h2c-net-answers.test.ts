/**
 * The `net` panel's h2c splice (`listeners[].h2c: allow`) answers what a client may send before
 * its first request (issue 40 item 4): the router ACKs every SETTINGS and answers every PING
 * (same payload) before any backend is chosen, and cuts the backend's own ACKs of those on the
 * way back, so the client gets each answer once. These are the h2spec `generic` cases the splice
 * is concerned with, written as raw frames (h2spec itself cannot be built here: its source is not
 * reachable), with the RFC 9113 section in each name. The bound on frames before the first
 * HEADERS (32, SETTINGS included) is a flood guard, answered GOAWAY ENHANCE_YOUR_CALM.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLAG, FRAME } from '../../src/peek/h2-frames.ts';
import { block, frame, framesOf, goawayCode, headers, prelude, type ReplyFrame } from '../fixtures/h2/build.ts';
import { eventually, startTestRouter, type TestRouter } from '../harness/router.ts';
import { type H2Backend, startH2Backend } from './http2-helpers.ts';

const SETTINGS_ACK = frame(FRAME.SETTINGS, FLAG.ACK, 0);
/** SETTINGS_INITIAL_WINDOW_SIZE = 65536 (a non-empty SETTINGS, RFC 9113 §6.5.2). */
const WINDOW_SETTINGS = frame(FRAME.SETTINGS, 0, 0, Buffer.from([0, 4, 0, 1, 0, 0]));
const ping = (payload: string, flags = 0) => frame(FRAME.PING, flags, 0, Buffer.from(payload, 'latin1'));
const GET = headers(
  block([
    [':method', 'GET'],
    [':scheme', 'http'],
    [':authority', 'h2.test'],
    [':path', '/answers'],
  ]),
);

/** A raw h2c client: what it received, as frames. */
function rawClient(port: number): Promise<{ socket: Socket; frames: () => ReplyFrame[]; bytes: () => Buffer }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect({ port, host: '127.0.0.1' }, () =>
      resolve({ socket, frames: () => framesOf(Buffer.concat(chunks)), bytes: () => Buffer.concat(chunks) }),
    );
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => {});
  });
}

const isAck = (type: number) => (f: ReplyFrame) => f.type === type && (f.flags & FLAG.ACK) !== 0;

describe('net panel, h2c: allow: SETTINGS and PING answered before routing, the backend duplicates cut', () => {
  let backend: H2Backend;
  let router: TestRouter;

  beforeAll(async () => {
    backend = await startH2Backend('be');
    router = await startTestRouter({
      listeners: [{ name: 'web', address: '127.0.0.1:0', h2c: 'allow' }],
      addressBook: {
        name: 'bfe',
        products: { p: { hosts: ['*'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
        clusters: {
          c: { protocol: 'h2c', subclusters: { s1: { weight: 1, backends: [{ address: backend.address }] } } },
        },
      },
    });
  });
  afterAll(async () => {
    await router.close();
    await backend.close();
  });

  it('a PING before the first request gets its PING ACK, same payload, and no backend is chosen (§6.7; h2spec generic 6.7)', async () => {
    const c = await rawClient(router.port());
    c.socket.write(Buffer.concat([prelude(), ping('h2spec!!')]));
    await eventually(() => c.frames().some(isAck(FRAME.PING)), 5_000, 'a PING ACK');
    c.socket.destroy();
    const frames = c.frames();
    expect(frames[0]).toMatchObject({ type: FRAME.SETTINGS, flags: 0 });
    expect(frames.find(isAck(FRAME.PING))?.payload.toString('latin1')).toBe('h2spec!!');
    expect(backend.sessions).toBe(0);
  });

  it('every SETTINGS before the first request is ACKed, and no backend is chosen (§6.5.3; h2spec generic 6.5)', async () => {
    const c = await rawClient(router.port());
    c.socket.write(Buffer.concat([prelude(), WINDOW_SETTINGS]));
    await eventually(() => c.frames().filter(isAck(FRAME.SETTINGS)).length >= 2, 5_000, 'two SETTINGS ACKs');
    c.socket.destroy();
    // The server's SETTINGS come first (§3.4), then an ACK per client SETTINGS.
    expect(c.bytes().subarray(0, 27)).toEqual(Buffer.concat([frame(FRAME.SETTINGS, 0, 0), SETTINGS_ACK, SETTINGS_ACK]));
    expect(backend.sessions).toBe(0);
  });

  it('after the route the client gets one ACK per SETTINGS and per PING: the backend’s own are cut; later ones pass (§6.5.3, §6.7)', async () => {
    const c = await rawClient(router.port());
    c.socket.write(Buffer.concat([prelude(), WINDOW_SETTINGS, ping('first!!!'), ping('second!!'), SETTINGS_ACK, GET]));
    const done = () =>
      c.frames().some((f) => f.type === FRAME.DATA && f.streamId === 1 && (f.flags & FLAG.END_STREAM) !== 0);
    await eventually(done, 5_000, 'the response');
    // A PING after the route is the backend's to answer: it passes, once.
    c.socket.write(ping('after!!!'));
    await eventually(() => c.frames().filter(isAck(FRAME.PING)).length >= 3, 5_000, 'the third PING ACK');
    // Anything else the backend sends (a SETTINGS ACK too many, a PING ACK twice) comes with it.
    c.socket.write(ping('fence!!!'));
    await eventually(() => c.frames().filter(isAck(FRAME.PING)).length >= 4, 5_000, 'the fence');
    c.socket.destroy();
    const frames = c.frames();
    expect(frames.filter(isAck(FRAME.SETTINGS))).toHaveLength(2);
    expect(frames.filter(isAck(FRAME.PING)).map((f) => f.payload.toString('latin1'))).toEqual([
      'first!!!',
      'second!!',
      'after!!!',
      'fence!!!',
    ]);
    // The backend's own SETTINGS (not an ACK) reached the client, after the router's.
    expect(frames.filter((f) => f.type === FRAME.SETTINGS && f.flags === 0)).toHaveLength(2);
    expect(
      JSON.parse(Buffer.concat(frames.filter((f) => f.type === FRAME.DATA).map((f) => f.payload)).toString()),
    ).toMatchObject({ backend: 'be', path: '/answers' });
  });

  it('PRIORITY, WINDOW_UPDATE on stream 0 and an unknown frame type before the first request: the PING after them is answered (§5.3, §6.9, §5.5; h2spec generic 3.3, 3.9)', async () => {
    const sessions = backend.sessions;
    const c = await rawClient(router.port());
    const priority = frame(FRAME.PRIORITY, 0, 3, Buffer.from([0, 0, 0, 1, 255]));
    const windowUpdate = frame(FRAME.WINDOW_UPDATE, 0, 0, Buffer.from([0, 0, 0x10, 0]));
    const unknown = frame(0xfa, 0, 0, Buffer.from('ext'));
    c.socket.write(Buffer.concat([prelude(), priority, windowUpdate, unknown, ping('alive!!!')]));
    await eventually(() => c.frames().some(isAck(FRAME.PING)), 5_000, 'a PING ACK');
    c.socket.destroy();
    expect(c.frames().find(isAck(FRAME.PING))?.payload.toString('latin1')).toBe('alive!!!');
    expect(c.frames().some((f) => f.type === FRAME.GOAWAY)).toBe(false);
    expect(backend.sessions).toBe(sessions);
  });

  it('32 frames before the first request are the bound (a flood guard): the 33rd gets GOAWAY ENHANCE_YOUR_CALM', async () => {
    const sessions = backend.sessions;
    const c = await rawClient(router.port());
    const pings = Array.from({ length: 32 }, (_, i) => ping(`p${String(i).padStart(7, '0')}`));
    c.socket.write(Buffer.concat([prelude(), ...pings]));
    await eventually(() => goawayCode(c.bytes()) !== undefined, 5_000, 'a GOAWAY');
    c.socket.destroy();
    expect(goawayCode(c.bytes())).toBe(0xb);
    // The 31 PINGs within the bound were answered before it.
    expect(c.frames().filter(isAck(FRAME.PING))).toHaveLength(31);
    expect(backend.sessions).toBe(sessions);
  });
});
