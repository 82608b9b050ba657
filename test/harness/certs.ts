/**
 * Test certificates made with `openssl` in a temporary directory: a CA, then leaf certificates
 * signed by it with the DNS / IP names a test needs (P-256 keys: fast to generate).
 *
 *   const pki = await createPki();                      // CA "Switchboard Test CA"
 *   const www = await pki.leaf('www', { dns: ['www.example.test'] });
 *   www.cert, www.key                                   // file paths; www.certPem, www.keyPem
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A certificate and its key, as files and as PEM text. */
export interface CertPair {
  readonly cert: string;
  readonly key: string;
  readonly certPem: string;
  readonly keyPem: string;
}

export interface LeafOptions {
  /** DNS subjectAltNames (may include `*.` wildcards). */
  readonly dns?: readonly string[];
  /** IP subjectAltNames. */
  readonly ip?: readonly string[];
  /** Subject CN (default: the first DNS name, else the leaf's name). */
  readonly cn?: string;
}

/** A CA in a temporary directory that signs leaf certificates. */
export interface Pki {
  readonly dir: string;
  readonly ca: CertPair;
  /** Issues `<name>.crt` / `<name>.key` signed by this CA. */
  leaf(name: string, options?: LeafOptions): Promise<CertPair>;
  /** Another CA in the same directory (for "wrong CA" cases). */
  otherCa(name: string, cn: string): Promise<Pki>;
  /** Removes the directory (only the Pki that created it does). */
  close(): Promise<void>;
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

async function pair(dir: string, name: string): Promise<CertPair> {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  return { cert, key, certPem: await readFile(cert, 'utf8'), keyPem: await readFile(key, 'utf8') };
}

async function makeCa(dir: string, name: string, cn: string): Promise<CertPair> {
  await run('openssl', [
    'req',
    '-x509',
    ...EC,
    '-keyout',
    join(dir, `${name}.key`),
    '-out',
    join(dir, `${name}.crt`),
    '-days',
    '3650',
    '-subj',
    `/CN=${cn}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  return pair(dir, name);
}

async function makeLeaf(dir: string, ca: CertPair, name: string, o: LeafOptions): Promise<CertPair> {
  const csr = join(dir, `${name}.csr`);
  const ext = join(dir, `${name}.ext`);
  const sans = [...(o.dns ?? []).map((d) => `DNS:${d}`), ...(o.ip ?? []).map((i) => `IP:${i}`)];
  const cn = o.cn ?? o.dns?.[0] ?? name;
  await run('openssl', ['req', ...EC, '-keyout', join(dir, `${name}.key`), '-out', csr, '-subj', `/CN=${cn}`]);
  await writeFile(
    ext,
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature',
      'extendedKeyUsage=serverAuth,clientAuth',
      ...(sans.length > 0 ? [`subjectAltName=${sans.join(',')}`] : []),
    ].join('\n'),
  );
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    ca.cert,
    '-CAkey',
    ca.key,
    '-set_serial',
    `0x${randomBytes(8).toString('hex')}`,
    '-days',
    '825',
    '-out',
    join(dir, `${name}.crt`),
    '-extfile',
    ext,
  ]);
  return pair(dir, name);
}

function pkiOf(dir: string, ca: CertPair, owner: boolean): Pki {
  return {
    dir,
    ca,
    leaf: (name, options = {}) => makeLeaf(dir, ca, name, options),
    otherCa: async (name, cn) => pkiOf(dir, await makeCa(dir, name, cn), false),
    close: () => (owner ? rm(dir, { recursive: true, force: true }) : Promise.resolve()),
  };
}

/** Creates a CA (CN `cn`) in a fresh temporary directory, or in `dir` when given. */
export async function createPki(cn = 'Switchboard Test CA', dir?: string): Promise<Pki> {
  const where = dir ?? (await mkdtemp(join(tmpdir(), 'swb-pki-')));
  return pkiOf(where, await makeCa(where, 'ca', cn), dir === undefined);
}
