/**
 * The fleet's etcd3 client from `fleet.etcd`: endpoints, a deadline of `dialTimeout` on every
 * unary call (so a call to an unreachable etcd fails in bounded time and the fleet turns
 * degraded instead of waiting), TLS from files relative to the config, password auth.
 */
import { resolve } from 'node:path';
import { Etcd3, type IOptions } from 'etcd3';
import { exponentialBackoff } from '../../address-books/etcd/client.ts';
import { PEM_FILE, readUserFile } from '../../src/base/safe-file.ts';
import type { FleetConfig } from '../../src/config/fleet.ts';
import { FleetError, firstLine } from './errors.ts';

async function pem(dir: string, file: string, path: string): Promise<Buffer> {
  try {
    return await readUserFile(resolve(dir, file), PEM_FILE);
  } catch (e) {
    throw new FleetError(`fleet.etcd.tls.${path}: ${firstLine(e)}`, { cause: e });
  }
}

/** A new client for `etcd` (paths relative to `dir`, the config's directory); the caller closes it. */
export async function connectFleetEtcd(etcd: FleetConfig['etcd'], dir: string): Promise<Etcd3> {
  const hosts = typeof etcd.endpoints === 'string' ? [etcd.endpoints] : [...etcd.endpoints];
  const deadline = etcd.dialTimeout;
  const options: IOptions = {
    hosts,
    dialTimeout: deadline,
    defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + deadline }),
    faultHandling: { watchBackoff: exponentialBackoff(100, 2000) },
  };
  if (etcd.tls !== undefined) {
    options.credentials = {
      rootCertificate: await pem(dir, etcd.tls.ca, 'ca'),
      ...(etcd.tls.cert !== undefined ? { certChain: await pem(dir, etcd.tls.cert, 'cert') } : {}),
      ...(etcd.tls.key !== undefined ? { privateKey: await pem(dir, etcd.tls.key, 'key') } : {}),
    };
  }
  if (etcd.auth !== undefined) options.auth = { username: etcd.auth.username, password: etcd.auth.password };
  return new Etcd3(options);
}
