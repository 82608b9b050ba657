/**
 * A certificate path swapped for what is not a file (issue 39 item 7): a FIFO or a symlink to
 * /dev/zero at a listener's `cert` path. A reload and the certificate watcher refuse it with a
 * clear error at once (the path and what it is), no libuv threadpool thread is left waiting on
 * the FIFO (dns.lookup and fs calls still answer, six reloads later), reading /dev/zero does not
 * grow memory, and the old certificate keeps serving new handshakes throughout.
 */
import { X509Certificate } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { appendFile, copyFile, stat, symlink, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { type CertPair, createPki, type Pki } from '../harness/certs.ts';
import { eventually, startLiveCertRouter, tempDir } from '../harness/router.ts';
import { mkfifo, releaseFifoReaders, rssMiB, within } from '../harness/special-files.ts';

const NAME = 'www.example.test';

/** The fingerprint a new verified handshake gets. */
function served(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, ca, servername: NAME }, () => {
      resolve(s.getPeerX509Certificate()!.fingerprint256);
      s.destroy();
    });
    s.once('error', reject);
  });
}

let pki: Pki;
let v1: CertPair;
let backend: TestBackend;

beforeAll(async () => {
  pki = await createPki();
  v1 = await pki.leaf('v1', { dns: [NAME] });
  backend = await startHttpBackend('b');
});
afterAll(async () => {
  await backend.close();
  await pki.close();
});

it.each([
  ['net', { name: 'net' }],
  ['worker (net, 2 threads)', { name: 'worker', threads: 2, engine: 'net' }],
])(
  '%s: a FIFO or /dev/zero at the cert path is refused at once; nothing blocks; the old certificate serves',
  async (_label, panel) => {
    const dir = await tempDir();
    const crt = join(dir, 'live.crt');
    await copyFile(v1.cert, crt);
    await copyFile(v1.key, join(dir, 'live.key'));
    const { router: r, lines } = await startLiveCertRouter(panel, dir, NAME, backend.address);
    const config = join(dir, 'switchboard.yaml');
    let edits = 0;
    /** A reload of a config whose text changed (an identical text rebuilds nothing), bounded. */
    const reload = async () => {
      await appendFile(config, `# edit ${++edits}\n`);
      return within(r.router.reload(), 10_000, `reload ${edits}`);
    };
    try {
      const port = r.port('tls');
      const ca = pki.ca.certPem;
      const v1fp = new X509Certificate(v1.certPem).fingerprint256;
      expect(await served(port, ca)).toBe(v1fp);

      // A FIFO: a blocking read would wait for a writer, one threadpool thread per read.
      await unlink(crt);
      mkfifo(crt);
      for (let i = 0; i < 6; i++) {
        const result = await reload();
        expect(result.ok).toBe(false);
        expect(result.errors).toEqual([
          `listeners[0].certificates[0].cert: cannot read ${crt}: a FIFO, not a regular file`,
        ]);
      }
      await eventually(
        () => lines.some((l) => l.includes('new pair is not usable') && l.includes('a FIFO, not a regular file')),
        15_000,
        'the watcher refusing the FIFO',
      );
      await within(lookup('localhost'), 10_000, 'dns.lookup after the FIFO');
      await within(stat(join(dir, 'live.key')), 10_000, 'fs.stat after the FIFO');
      expect(await served(port, ca)).toBe(v1fp);

      // A symlink to /dev/zero: a read without a cap never ends.
      await unlink(crt);
      await symlink('/dev/zero', crt);
      const before = rssMiB();
      const result = await reload();
      expect(result.errors).toEqual([
        `listeners[0].certificates[0].cert: cannot read ${crt}: a character device, not a regular file`,
      ]);
      await eventually(
        () => lines.some((l) => l.includes('new pair is not usable') && l.includes('a character device')),
        15_000,
        'the watcher refusing /dev/zero',
      );
      expect(rssMiB() - before).toBeLessThan(64);
      expect(await served(port, ca)).toBe(v1fp);

      // The real file back: the next reload takes it.
      await unlink(crt);
      await copyFile(v1.cert, crt);
      expect((await reload()).ok).toBe(true);
      expect(await served(port, ca)).toBe(v1fp);
    } finally {
      // Code that did block on the FIFO (today's main) is let go, so the run still ends.
      releaseFifoReaders(crt);
      await r.close();
    }
  },
  90_000,
);
