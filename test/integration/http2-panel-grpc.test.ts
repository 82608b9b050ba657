/**
 * gRPC through the http2 panel with @grpc/grpc-js on both ends (examples/grpc): unary and
 * bidirectional-streaming calls routed per call, statuses and trailers intact, metadata passed,
 * and the router's own errors seen by gRPC clients as grpc-status (UNAVAILABLE, UNIMPLEMENTED).
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoClient, echoClient, type EchoReply as Reply, startEchoServer } from '../../examples/grpc/service.ts';
import { closedPort } from '../harness/backend.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

function say(client: EchoClient, message: string, md = new grpc.Metadata()) {
  return new Promise<{ err: grpc.ServiceError | null; reply?: Reply; trailers?: grpc.Metadata }>((resolve) => {
    let result: { err: grpc.ServiceError | null; reply?: Reply } = { err: null };
    const call = client.Say({ message }, md, (err, reply) => {
      result = { err, reply };
    });
    // 'status' (with the trailers) comes after the callback.
    call.on('status', (s: grpc.StatusObject) => resolve({ ...result, trailers: s.metadata }));
  });
}

describe('http2 panel: gRPC (grpc-js client and server)', () => {
  const servers: grpc.Server[] = [];
  let router: TestRouter;
  let client: EchoClient;
  let orphan: EchoClient;

  beforeAll(async () => {
    const one = await startEchoServer('echo-1');
    const two = await startEchoServer('echo-2');
    servers.push(one.server, two.server);
    const dead = await closedPort();
    router = await startTestRouter(
      { panel: 'http2', operator: 'round-robin', addressBook: { name: 'file', path: 'servers.yaml' } },
      {
        dir: await tempDir({
          'servers.yaml': [
            `- { host: echo.test, path: /switchboard.example.Echo, backends: [127.0.0.1:${one.port}, 127.0.0.1:${two.port}], protocol: h2c }`,
            `- { host: down.test, backends: [127.0.0.1:${dead}], protocol: h2c, retries: 0 }`,
          ].join('\n'),
        }),
      },
    );
    const target = `127.0.0.1:${router.port()}`;
    client = echoClient(target, {
      'grpc.default_authority': 'echo.test',
    });
    orphan = echoClient(target, {
      'grpc.default_authority': 'down.test',
    });
  });
  afterAll(async () => {
    client.close();
    orphan.close();
    await router.close();
    for (const s of servers) s.forceShutdown();
  });

  it('routes each unary call on its own and passes metadata and trailers', async () => {
    const md = new grpc.Metadata();
    md.set('x-client', 'vitest');
    const replies = await Promise.all([1, 2, 3, 4].map((i) => say(client, `m${i}`, md)));
    for (const r of replies) {
      expect(r.err).toBeNull();
      expect(r.trailers?.get('x-echo-trailer')).toEqual(['seen vitest']);
    }
    expect(replies.map((r) => r.reply?.message)).toEqual(['m1', 'm2', 'm3', 'm4']);
    // One decision per call: both servers answered over one client connection.
    expect(new Set(replies.map((r) => r.reply?.server))).toEqual(new Set(['echo-1', 'echo-2']));
    await eventually(() => router.access.filter((r) => r.path === '/switchboard.example.Echo/Say').length >= 4);
  });

  it('passes a non-OK status with its details and trailers unchanged', async () => {
    const r = await say(client, 'fail:5');
    expect(r.err?.code).toBe(grpc.status.NOT_FOUND);
    expect(r.err?.details).toBe('asked to fail');
    expect(r.err?.metadata.get('x-failed')).toEqual(['yes']);
  });

  it('streams a bidirectional call both ways and ends with the trailers', async () => {
    const call = client.Chat();
    const got: string[] = [];
    const status = new Promise<grpc.StatusObject>((r) => call.on('status', r));
    // Ping-pong: each message is answered before the next is sent, so the stream is truly interactive.
    for (const m of ['one', 'two', 'three']) {
      const next = new Promise<Reply>((r) => call.once('data', r));
      call.write({ message: m });
      got.push((await next).message);
    }
    call.end();
    const s = await status;
    expect(got).toEqual(['one', 'two', 'three']);
    expect(s.code).toBe(grpc.status.OK);
    expect(s.metadata.get('x-chat-trailer')).toEqual(['bye']);
  });

  it('answers UNAVAILABLE when every backend refuses, UNIMPLEMENTED with no route', async () => {
    const down = await say(orphan, 'x');
    expect(down.err?.code).toBe(grpc.status.UNAVAILABLE);
    const lost = echoClient(`127.0.0.1:${router.port()}`, {
      'grpc.default_authority': 'nowhere.test',
    });
    const none = await say(lost, 'x');
    lost.close();
    expect(none.err?.code).toBe(grpc.status.UNIMPLEMENTED);
    // The access log agrees with the result (issue 19): `status` is the result's HTTP status
    // (the wire :status of a gRPC answer is 200), `grpcStatus` the code the client got.
    await eventually(() => router.access.some((r) => r.host === 'nowhere.test'));
    await eventually(() => router.access.some((r) => r.host === 'down.test'));
    expect(router.access.find((r) => r.host === 'nowhere.test')).toMatchObject({
      result: 'no_route',
      status: 404,
      grpcStatus: grpc.status.UNIMPLEMENTED,
    });
    expect(router.access.find((r) => r.host === 'down.test')).toMatchObject({
      result: 'connect_failed',
      status: 502,
      grpcStatus: grpc.status.UNAVAILABLE,
    });
  });
});
