/**
 * gRPC through the splicing `net` panel, @grpc/grpc-js on both ends (examples/grpc): grpc-js
 * sends no HEADERS before the server's SETTINGS, so the router answers the preface with its own
 * empty SETTINGS while it peeks, routes the channel by its first call's `:authority` and `:path`,
 * and cuts the client's one ACK of those SETTINGS (docs/http2.md). Every call carries
 * a deadline of a few seconds: without the router's SETTINGS no call ever starts (grpc-js gives
 * up with UNAVAILABLE after its 20 s connect timeout).
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoClient, echoClient, type EchoReply as Reply, startEchoServer } from '../../examples/grpc/service.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

/** A deadline well under grpc-js's 20 s connect timeout, and generous for a loaded machine. */
const DEADLINE_MS = 5_000;
const deadline = () => ({ deadline: Date.now() + DEADLINE_MS });

function say(client: EchoClient, message: string) {
  const md = new grpc.Metadata();
  md.set('x-client', 'net-panel');
  return new Promise<{ err: grpc.ServiceError | null; reply?: Reply; trailers?: grpc.Metadata }>((resolve) => {
    let result: { err: grpc.ServiceError | null; reply?: Reply } = { err: null };
    const call = client.Say({ message }, md, deadline(), (err, reply) => {
      result = { err, reply };
    });
    call.on('status', (s: grpc.StatusObject) => resolve({ ...result, trailers: s.metadata }));
  });
}

describe('net panel: gRPC over h2c (grpc-js client and server)', () => {
  const servers: grpc.Server[] = [];
  const clients: EchoClient[] = [];
  let router: TestRouter;

  /** A client with its own connection (grpc-js shares subchannels between clients otherwise). */
  const newClient = (authority = 'echo.test') => {
    const c = echoClient(`127.0.0.1:${router.port()}`, {
      'grpc.default_authority': authority,
      'grpc.use_local_subchannel_pool': 1,
    });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    const one = await startEchoServer('echo-1');
    const two = await startEchoServer('echo-2');
    servers.push(one.server, two.server);
    router = await startTestRouter(
      // The splice (`allow`); gRPC under `route`, the per-request default, is h2c-route.test.ts.
      {
        panel: 'net',
        listeners: [{ name: 'web', address: '127.0.0.1:0', h2c: 'allow' }],
        addressBook: { name: 'file', path: 'servers.yaml' },
      },
      {
        dir: await tempDir({
          'servers.yaml': [
            `- { host: echo.test, path: /switchboard.example.Echo/Say, backends: [127.0.0.1:${one.port}] }`,
            `- { host: echo.test, path: /switchboard.example.Echo/Chat, backends: [127.0.0.1:${two.port}] }`,
          ].join('\n'),
        }),
      },
    );
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await router.close();
    for (const s of servers) s.forceShutdown();
  });

  it('unary calls succeed within their deadline, routed by :path, with metadata and trailers', async () => {
    const client = newClient();
    for (const m of ['first', 'second']) {
      const r = await say(client, m);
      expect(r.err).toBeNull();
      expect(r.reply).toEqual({ message: m, server: 'echo-1' });
      expect(r.trailers?.get('x-echo-trailer')).toEqual(['seen net-panel']);
    }
    const failed = await say(client, 'fail:5');
    expect(failed.err?.code).toBe(grpc.status.NOT_FOUND);
    expect(failed.err?.metadata.get('x-failed')).toEqual(['yes']);
    // One access line per connection, written when it closes: routed by its first call.
    client.close();
    await eventually(() => router.access.some((r) => r.path === '/switchboard.example.Echo/Say'));
    const line = router.access.find((r) => r.path === '/switchboard.example.Echo/Say');
    expect(line).toMatchObject({ protocol: 'h2c', host: 'echo.test', result: 'ok' });
  });

  it('a bidirectional stream is routed by its :path to the other backend and streams both ways', async () => {
    const client = newClient();
    const call = client.Chat(new grpc.Metadata(), deadline());
    const status = new Promise<grpc.StatusObject>((r) => call.on('status', r));
    let failed: Error | undefined;
    call.on('error', (e: Error) => (failed = e));
    const got: Reply[] = [];
    // Ping-pong: each message is answered before the next is sent (an error ends the wait).
    for (const m of ['one', 'two', 'three']) {
      const next = new Promise<Reply>((resolve, reject) => {
        if (failed !== undefined) reject(failed);
        call.once('data', resolve);
        call.once('error', reject);
      });
      call.write({ message: m });
      got.push(await next);
    }
    call.end();
    const s = await status;
    expect(s.code).toBe(grpc.status.OK);
    expect(s.metadata.get('x-chat-trailer')).toEqual(['bye']);
    expect(got).toEqual(['one', 'two', 'three'].map((message) => ({ message, server: 'echo-2' })));
  });

  it('calls on many channels at once all succeed (each connection gets its own SETTINGS and cut)', async () => {
    const replies = await Promise.all([1, 2, 3, 4, 5].map((i) => say(newClient(), `m${i}`)));
    for (const r of replies) expect(r.err).toBeNull();
    expect(replies.map((r) => r.reply?.message)).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
  });
});
