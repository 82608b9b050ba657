/**
 * `log.accessFormat` through the real router (issue 45 item 7): the access log file gets JSON
 * lines (the default), then combined lines and pretty lines after reloads that change only the
 * format, each line made from a real request.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Router, startRouter } from '../../app/start.ts';
import { createLogger } from '../../src/base/log.ts';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { httpGet } from '../harness/http.ts';
import { eventually, tempDir } from '../harness/router.ts';

let backend: TestBackend;
let router: Router;
let dir: string;

const config = (format: string) =>
  // An absolute path: a relative one is the working directory's.
  [
    'listeners: [{ name: web, address: "127.0.0.1:0" }]',
    'addressBook: { name: file, path: servers.yaml }',
    `log: { access: ${join(dir, 'access.log')}, accessFormat: ${format} }`,
    'limits: { drainTimeout: 1s }',
  ].join('\n');

/** The access log's lines, once it has `n`. */
async function lines(n: number): Promise<string[]> {
  let got: string[] = [];
  await eventually(async () => {
    got = (await readFile(join(dir, 'access.log'), 'utf8').catch(() => '')).split('\n').filter((l) => l !== '');
    return got.length >= n;
  });
  return got;
}

async function request(path: string): Promise<void> {
  const port = Object.values(router.panel.addresses())[0]!.port;
  expect((await httpGet(port, path, { host: 'a.test' })).status).toBe(200);
}

async function switchTo(format: string): Promise<void> {
  await writeFile(join(dir, 'switchboard.yaml'), config(format));
  expect((await router.reload()).ok).toBe(true);
}

beforeAll(async () => {
  backend = await startHttpBackend('web');
  dir = await tempDir({ 'servers.yaml': `- { host: a.test, backends: ["${backend.address}"] }` });
  await writeFile(join(dir, 'switchboard.yaml'), config('json'));
  // The access log is the router's own (a file in the config's directory), not the harness's array.
  router = await startRouter(join(dir, 'switchboard.yaml'), {}, { logger: createLogger('silent') });
});
afterAll(async () => {
  await router.close();
  await backend.close();
});

it('writes json, then combined, then pretty lines as the reloaded config says', async () => {
  await request('/json');
  const [json] = await lines(1);
  expect(JSON.parse(json!)).toMatchObject({
    msg: 'access',
    method: 'GET',
    path: '/json',
    status: 200,
    line: 'request',
  });

  await switchTo('combined');
  await request('/combined');
  const combined = (await lines(2))[1]!;
  expect(combined).toMatch(
    /^127\.0\.0\.1 - - \[\d\d\/\w{3}\/\d{4}:\d\d:\d\d:\d\d \+0000\] "GET \/combined HTTP\/1\.1" 200 \d+ "-" "-" host=a\.test listener=web result=ok /,
  );

  await switchTo('pretty');
  await request('/pretty');
  const pretty = (await lines(3))[2]!;
  // A file is not a terminal: no colours.
  expect(pretty).toMatch(
    /^\d\d:\d\d:\d\d\.\d{3} 200 GET {2}a\.test\/pretty .* 127\.0\.0\.1:\d+ → 127\.0\.0\.1:\d+ a\.test$/,
  );
});
