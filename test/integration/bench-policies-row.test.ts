/**
 * The bench's policy row (bench/lib/policies-target.ts, issue 42 item 7) measures what it says:
 * its list file is valid and never lists the bench client, its rules load in the real router,
 * none of them fires for the bench's request (so the row forwards every request, as the row it
 * is compared with does), and they are live (a request they select is refused).
 */
import { writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { policiesYaml, QUIET_CONDITIONS, randomCidrLines } from '../../bench/lib/policies-target.ts';
import { SMALL_PATH } from '../../bench/lib/scenarios-shared.ts';
import { parseCidrList } from '../../policies/lib/cidr-list.ts';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

/** One request on its own connection; resolves with the status line's code (0: closed unanswered). */
function status(port: number, head: string): Promise<number> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1' });
    let data = '';
    s.on('data', (c: Buffer) => {
      data += c.toString('latin1');
    });
    s.on('error', () => {});
    s.once('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0)));
    s.write(head);
  });
}

describe('bench policy row', () => {
  let backend: TestBackend;
  let router: TestRouter;

  beforeAll(async () => {
    backend = await startHttpBackend('a');
    const dir = await tempDir({ 'servers.yaml': `- { host: "*", backends: [${backend.address}] }\n` });
    const list = join(dir, 'deny.txt');
    await writeFile(list, randomCidrLines(10_000, 42));
    const { policies } = parse(policiesYaml(list)) as { policies: unknown[] };
    router = await startTestRouter(
      { routing: 'per-request', addressBook: { name: 'file', path: 'servers.yaml' }, policies },
      { dir },
    );
  });
  afterAll(async () => {
    await router?.close();
    await backend?.close();
  });

  it('the list is valid, seeded, /24s and /32s, and never holds 127.0.0.0/8', async () => {
    const text = randomCidrLines(20_000, 7);
    expect(randomCidrLines(20_000, 7)).toBe(text);
    const lines = text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
    expect(lines).toHaveLength(20_000);
    expect(lines.some((l) => l.endsWith('.0/24'))).toBe(true);
    expect(lines.every((l) => !/^(127|0)\./.test(l))).toBe(true);
    const set = await parseCidrList(text, 'bench.txt');
    expect(set.has('127.0.0.1')).toBe(false);
    expect(set.has(lines[0]?.replace('/24', '') as string)).toBe(true);
  });

  it('twelve rules load; the bench request passes all of them; a request they select is refused', async () => {
    expect(router.router.runtime.engine.policies.rules.map((r) => r.point)).toEqual([
      'connection',
      ...QUIET_CONDITIONS.map(() => 'request'),
      'request',
    ]);
    const port = router.port();
    const bench = `GET ${SMALL_PATH} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`;
    expect(await status(port, bench)).toBe(200);
    expect(await status(port, `GET /admin HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n`)).toBe(403);
    const debug = `GET ${SMALL_PATH} HTTP/1.1\r\nHost: a.test\r\nX-Debug: on\r\nConnection: close\r\n\r\n`;
    expect(await status(port, debug)).toBe(403);
    expect(backend.hits).toBe(1);
    await eventually(() => router.access.length >= 3);
    expect(router.access.filter((a) => a.policy !== undefined).map((a) => a.policy)).toEqual(['quiet-3', 'quiet-6']);
  });
});
