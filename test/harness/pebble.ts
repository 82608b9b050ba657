/**
 * Debian's `pebble` (an ACME test CA) with `pebble-challtestsrv` as its DNS server answering
 * 127.0.0.1 for every name, so the CA validates challenges against the router on this host.
 * Validation is real (no PEBBLE_VA_ALWAYS_VALID); only the sleeps and nonce rejections are off.
 * `httpPort` / `tlsPort` are where pebble connects for HTTP-01 and TLS-ALPN-01: the router's
 * listeners, chosen by the test before the router starts.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { Agent, get } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closedPort } from './backend.ts';
import { createPki } from './certs.ts';
import { type PeerProcess, startPeerProcess } from './peer-process.ts';

export const PEBBLE_BIN = '/usr/bin/pebble';
export const CHALLTESTSRV_BIN = '/usr/bin/pebble-challtestsrv';

export function pebbleAvailable(): boolean {
  return existsSync(PEBBLE_BIN) && existsSync(CHALLTESTSRV_BIN);
}

export interface Pebble {
  /** The ACME directory URL. */
  readonly directory: string;
  /** CA file for pebble's own HTTPS (the `acme.ca` key). */
  readonly caFile: string;
  /** Pebble's issuing root (PEM), from its management endpoint. */
  root(): Promise<string>;
  /** Orders pebble has seen finalised (its output). */
  output(): string;
  /** Orders created so far (pebble logs `There are now N orders in the db`; the last N). */
  orders(): number;
  /** Certificates issued so far (pebble logs `Issued certificate serial … for order …`). */
  issued(): number;
  close(): Promise<void>;
}

function fetchText(url: string, agent: Agent): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = get(url, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
}

/** Starts challtestsrv (DNS) and pebble; `validitySeconds` is the lifetime of issued certificates. */
export async function startPebble(opts: {
  httpPort: number;
  tlsPort: number;
  validitySeconds: number;
}): Promise<Pebble> {
  const dir = await mkdtemp(join(tmpdir(), 'swb-pebble-'));
  const pki = await createPki('Pebble HTTPS Test CA', dir);
  const tls = await pki.leaf('localhost', { dns: ['localhost'], ip: ['127.0.0.1'] });
  const [acmePort, mgmtPort, dnsPort, dnsMgmtPort] = [
    await closedPort(),
    await closedPort(),
    await closedPort(),
    await closedPort(),
  ];
  const dns = await startPeerProcess({
    name: 'pebble-challtestsrv',
    bin: CHALLTESTSRV_BIN,
    args: [
      '-dns01',
      `127.0.0.1:${dnsPort}`,
      '-http01',
      '',
      '-https01',
      '',
      '-tlsalpn01',
      '',
      '-management',
      `127.0.0.1:${dnsMgmtPort}`,
      '-defaultIPv4',
      '127.0.0.1',
      '-defaultIPv6',
      '',
    ],
    dir: join(dir, 'dns-unused'),
    config: '',
    ready: async () => {
      try {
        const res = await fetch(`http://127.0.0.1:${dnsMgmtPort}/`);
        return res.status > 0;
      } catch {
        return false;
      }
    },
    signal: 'SIGTERM',
    timeoutMs: 15_000,
  });
  const config = JSON.stringify({
    pebble: {
      listenAddress: `127.0.0.1:${acmePort}`,
      managementListenAddress: `127.0.0.1:${mgmtPort}`,
      certificate: tls.cert,
      privateKey: tls.key,
      httpPort: opts.httpPort,
      tlsPort: opts.tlsPort,
      ocspResponderURL: '',
      externalAccountBindingRequired: false,
      certificateValidityPeriod: opts.validitySeconds,
    },
  });
  const configFile = join(dir, 'pebble.json');
  await writeFile(configFile, config);
  const agent = new Agent({ ca: pki.ca.certPem });
  const env = { PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0', PEBBLE_AUTHZREUSE: '0' };
  for (const [k, v] of Object.entries(env)) process.env[k] = v;
  let pebble: PeerProcess;
  try {
    pebble = await startPeerProcess({
      name: 'pebble',
      bin: PEBBLE_BIN,
      args: ['-config', configFile, '-dnsserver', `127.0.0.1:${dnsPort}`],
      dir,
      config,
      ready: async () => {
        try {
          return (await fetchText(`https://127.0.0.1:${acmePort}/dir`, agent)).status === 200;
        } catch {
          return false;
        }
      },
      signal: 'SIGTERM',
      timeoutMs: 15_000,
    });
  } catch (e) {
    await dns.close();
    throw e;
  }
  return {
    directory: `https://127.0.0.1:${acmePort}/dir`,
    caFile: pki.ca.cert,
    async root() {
      const r = await fetchText(`https://127.0.0.1:${mgmtPort}/roots/0`, agent);
      if (r.status !== 200) throw new Error(`pebble /roots/0: ${r.status}`);
      return r.body;
    },
    output: () => pebble.output(),
    orders: () => {
      const counts = [...pebble.output().matchAll(/There are now (\d+) orders in the db/g)];
      return counts.length === 0 ? 0 : Number(counts[counts.length - 1]![1]);
    },
    issued: () => pebble.output().match(/Issued certificate serial/g)?.length ?? 0,
    async close() {
      agent.destroy();
      await pebble.close();
      await dns.close();
    },
  };
}
