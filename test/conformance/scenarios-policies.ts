/**
 * Panel conformance scenarios for issue 42 step 2, part of the table of panel.ts: `policies:`
 * rules at the `connection` point, enforced by the listener pipeline on every panel.
 *
 * - `block` of `127.0.0.2/32`: a client bound to 127.0.0.2 is closed at accept with 0 backend
 *   connections, 127.0.0.1 is served (the listener is bound to 0.0.0.0, which every 127.0.0.x
 *   reaches; the whole of 127/8 is loopback on Linux).
 * - `rate-limit` of connections keyed by client address; `in-flight` of connections (5 held,
 *   max 2: 2 reach the backend, and after they close the next ones pass: the hold was released).
 * - The list file edited under load takes effect within a bounded poll, established connections
 *   untouched; a bad line in the list refuses the reload naming file:line and keeps the old list.
 * - An answer at the `connection` point is refused by `switchboard check`, naming the rule.
 * - A connection rate limit of burst N passes N in total on every panel: on the worker panel's
 *   two threads, N across both, not N × threads.
 *
 * The backend counts the TCP connections it accepts and the requests it answers (the http2 panel
 * reuses its upstream connections, so a count of forwarded connections is a count of requests).
 */
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { connect as netConnect, type Socket } from 'node:net';
import { join } from 'node:path';
import { expect } from 'vitest';
import { stringify } from 'yaml';
import { runCli } from '../harness/cli-run.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';
import { type PanelUnderTest, panelKeys, type Scenario } from './panel-under-test.ts';

const HOST = 'www.example.test';
const WILDCARD = [{ name: 'web', address: '0.0.0.0:0' }];

/** An HTTP/1.1 backend that counts the connections it accepts and the requests it answers. */
interface CountingBackend {
  readonly address: string;
  readonly accepted: number;
  readonly requests: number;
  close(): Promise<void>;
}

async function countingBackend(): Promise<CountingBackend> {
  let accepted = 0;
  let requests = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((_req, res) => {
    requests++;
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('served');
  });
  server.on('connection', (s: Socket) => {
    accepted++;
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  return {
    address: `127.0.0.1:${port}`,
    get accepted() {
      return accepted;
    },
    get requests() {
      return requests;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** Every host to one cluster of `address`. */
function book(address: string): Record<string, unknown> {
  return {
    name: 'bfe',
    products: { p: { hosts: ['*'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
    clusters: { c: { subclusters: { s1: { weight: 1, backends: [{ address }] } } } },
  };
}

/** What became of one connection: answered (and held open, keep-alive), or closed unanswered. */
interface Held {
  readonly outcome: 'served' | 'closed';
  readonly socket: Socket;
}

/** Connects from `from`, sends one keep-alive GET; `served` once answered, `closed` if closed first (4 s bound). */
function request(port: number, from = '127.0.0.1', socket?: Socket): Promise<Held> {
  return new Promise((resolve) => {
    const s = socket ?? netConnect({ port, host: '127.0.0.1', localAddress: from });
    let text = '';
    const done = (outcome: 'served' | 'closed') => {
      clearTimeout(timer);
      s.removeListener('data', onData);
      s.removeListener('close', onClose);
      resolve({ outcome, socket: s });
    };
    const onData = (d: Buffer) => {
      text += d.toString('latin1');
      if (text.includes('served')) done('served');
    };
    const onClose = () => done('closed');
    const timer = setTimeout(() => done('closed'), 4_000);
    s.on('error', () => {});
    s.on('data', onData);
    s.once('close', onClose);
    s.write(`GET / HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`);
  });
}

/** Opens a connection that sends nothing; resolves once it is accepted (or closed). */
function idle(port: number): Promise<Socket> {
  return new Promise((resolve) => {
    const s = netConnect({ port, host: '127.0.0.1' });
    s.on('error', () => {});
    s.once('connect', () => resolve(s));
    s.once('close', () => resolve(s));
  });
}

const closed = (s: Socket) => new Promise<void>((r) => (s.destroyed ? r() : s.once('close', () => r())));

/** A router for `p` on the wildcard listener with `policies`, files in its directory. */
async function routerWith(
  p: PanelUnderTest,
  backend: CountingBackend,
  policies: unknown[],
  files: Record<string, string> = {},
): Promise<TestRouter> {
  const dir = await tempDir(files);
  return startTestRouter(
    { ...panelKeys(p), listeners: WILDCARD, addressBook: book(backend.address), policies },
    { dir },
  );
}

/** Runs `body` with a counting backend and a router, closing both. */
async function withRouter(
  p: PanelUnderTest,
  policies: unknown[],
  body: (router: TestRouter, backend: CountingBackend) => Promise<void>,
  files: Record<string, string> = {},
): Promise<void> {
  const backend = await countingBackend();
  let router: TestRouter | undefined;
  try {
    router = await routerWith(p, backend, policies, files);
    await body(router, backend);
  } finally {
    await router?.close();
    await backend.close();
  }
}

export const policyScenarios: readonly Scenario[] = [
  {
    name: 'policies: block at connection closes 127.0.0.2 at accept (0 backend connections), serves 127.0.0.1',
    spec: 'docs/policies.md "What the connection point does today"; issue 42 item 6',
    run: (p) =>
      withRouter(
        p,
        [{ name: 'deny', use: 'block', point: 'connection', options: { cidrs: ['127.0.0.2/32'] } }],
        async (r, b) => {
          const blocked = await request(r.port(), '127.0.0.2');
          expect(blocked.outcome).toBe('closed');
          expect(b.accepted).toBe(0);
          const served = await request(r.port(), '127.0.0.1');
          expect(served.outcome).toBe('served');
          served.socket.destroy();
          expect(b.accepted).toBe(1);
          await eventually(() => r.access.some((a) => a.policy === 'deny'), 5_000, 'the line naming the rule');
          expect(r.access.find((a) => a.policy === 'deny')).toMatchObject({
            result: 'policy_closed',
            action: 'close',
            bytesOut: 0,
          });
        },
      ),
  },
  {
    name: 'policies: rate-limit of connections keyed by client address',
    spec: 'docs/policies.md "What the connection point does today" (rate-limit at connection)',
    run: (p) =>
      withRouter(
        p,
        [{ name: 'conn-rate', use: 'rate-limit', point: 'connection', options: { rate: '1/m', burst: 3 } }],
        async (r, b) => {
          const outcomes: string[] = [];
          for (let i = 0; i < 5; i++) {
            const h = await request(r.port(), '127.0.0.1');
            outcomes.push(h.outcome);
            h.socket.destroy();
          }
          expect(outcomes).toEqual(['served', 'served', 'served', 'closed', 'closed']);
          // Another client address has its own bucket.
          const other = await request(r.port(), '127.0.0.3');
          expect(other.outcome).toBe('served');
          other.socket.destroy();
          expect(b.requests).toBe(4);
        },
      ),
  },
  {
    name: 'policies: in-flight of connections max 2, 5 held: 2 reach the backend; after they close the next pass',
    spec: 'docs/policies.md "What the connection point does today" (in-flight released when the connection ends)',
    run: (p) =>
      withRouter(p, [{ name: 'two', use: 'in-flight', point: 'connection', options: { max: 2 } }], async (r, b) => {
        const held: Held[] = [];
        for (let i = 0; i < 5; i++) held.push(await request(r.port()));
        expect(held.map((h) => h.outcome)).toEqual(['served', 'served', 'closed', 'closed', 'closed']);
        expect(b.requests).toBe(2);
        for (const h of held) h.socket.destroy();
        await Promise.all(held.map((h) => closed(h.socket)));
        // The holds are given back when the router sees the connections end: two pass again.
        const again: Socket[] = [];
        for (const what of ['a first', 'a second']) {
          await eventually(
            async () => {
              const h = await request(r.port());
              if (h.outcome === 'served') again.push(h.socket);
              else h.socket.destroy();
              return h.outcome === 'served';
            },
            5_000,
            `${what} connection served after the held ones closed`,
          );
        }
        expect(b.requests).toBe(4);
        for (const s of again) s.destroy();
      }),
  },
  {
    name: 'policies: a block list file edited under load takes effect within the poll; established connections stay',
    spec: 'docs/policies.md `block` (the file is watched, about a second)',
    run: (p) =>
      withRouter(
        p,
        [{ name: 'deny-list', use: 'block', point: 'connection', options: { file: 'deny.txt' } }],
        async (r) => {
          const established = await request(r.port(), '127.0.0.2');
          expect(established.outcome).toBe('served');
          const started = Date.now();
          await writeFile(join(r.dir, 'deny.txt'), '# edited\n127.0.0.9/32\n127.0.0.2/32\n');
          let probe: Held | undefined;
          await eventually(
            async () => {
              probe = await request(r.port(), '127.0.0.2');
              probe.socket.destroy();
              return probe.outcome === 'closed';
            },
            5_000,
            'the edited list blocking 127.0.0.2',
          );
          expect(Date.now() - started).toBeLessThan(5_000);
          // The connection accepted before the edit is not closed: it is answered again.
          const again = await request(r.port(), '127.0.0.2', established.socket);
          expect(again.outcome).toBe('served');
          established.socket.destroy();
          expect((await request(r.port(), '127.0.0.1')).outcome).toBe('served');
        },
        { 'deny.txt': '127.0.0.9/32\n' },
      ),
  },
  {
    name: 'policies: a bad list line refuses the reload naming file:line and keeps the old list',
    spec: 'docs/policies.md "Reloads"; issue 42 item 6',
    run: (p) =>
      withRouter(
        p,
        [{ name: 'deny-list', use: 'block', point: 'connection', options: { file: 'deny.txt' } }],
        async (r, b) => {
          await writeFile(join(r.dir, 'bad.txt'), '127.0.0.3/32\n10.0.0.0/33\n');
          const file = join(r.dir, 'switchboard.yaml');
          await writeFile(
            file,
            stringify({
              ...panelKeys(p),
              listeners: WILDCARD,
              addressBook: book(b.address),
              limits: { drainTimeout: '1s' },
              policies: [{ name: 'deny-list', use: 'block', point: 'connection', options: { file: 'bad.txt' } }],
            }),
          );
          const result = await r.router.reload();
          expect(result.ok).toBe(false);
          expect(result.errors.join('\n')).toMatch(/bad\.txt:2/);
          // The old list still blocks 127.0.0.2 and lets 127.0.0.3 through.
          expect((await request(r.port(), '127.0.0.2')).outcome).toBe('closed');
          const other = await request(r.port(), '127.0.0.3');
          expect(other.outcome).toBe('served');
          other.socket.destroy();
        },
        { 'deny.txt': '127.0.0.2/32\n' },
      ),
  },
  {
    name: 'policies: an answer at the connection point is refused by switchboard check, naming the rule',
    spec: 'docs/policies.md "Points" (an answer needs a request point)',
    timeoutMs: 20_000,
    run: async (p) => {
      const dir = await tempDir();
      const file = join(dir, 'switchboard.yaml');
      await writeFile(
        file,
        stringify({
          ...panelKeys(p),
          listeners: WILDCARD,
          addressBook: book('127.0.0.1:9'),
          policies: [
            { name: 'deny', use: 'block', point: 'connection', options: { cidrs: ['10.0.0.0/8'] } },
            { name: 'admin-internal', use: 'block', point: 'connection', action: { respond: 403 } },
          ],
        }),
      );
      const r = await runCli(['check', '--config', file]);
      expect(r.code).toBe(3);
      expect(r.stderr).toContain(
        'policies[1] (admin-internal): action: respond needs the request point or later; the rule runs at connection',
      );
    },
  },
  {
    name: 'policies: a connection rate limit of burst 6 passes 6 in total (worker: across its threads, not 6 × threads)',
    spec: 'docs/policies.md "What the connection point does today" (panel: worker counts once for the process)',
    run: (p) =>
      withRouter(
        p,
        [{ name: 'burst', use: 'rate-limit', point: 'connection', options: { rate: '1/m', burst: 6 } }],
        async (r, b) => {
          const sockets = await Promise.all(Array.from({ length: 24 }, () => idle(r.port())));
          const outcomes = await Promise.all(
            sockets.map((s) => (s.destroyed ? { outcome: 'closed' } : request(r.port(), '127.0.0.1', s))),
          );
          expect(outcomes.filter((o) => o.outcome === 'served').length).toBe(6);
          for (const s of sockets) s.destroy();
          expect(b.requests).toBe(6);
        },
      ),
  },
];
