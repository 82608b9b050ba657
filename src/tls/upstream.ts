/**
 * TLS towards backends (cluster `tls: { sni, ca, verify }`): re-encrypting what a terminating
 * listener decrypted, or encrypting plaintext HTTP for a TLS-only backend.
 *
 *   1. One `UpstreamTls` per engine knows the config directory, so a relative `ca` resolves
 *      against it.
 *   2. The SecureContext of a cluster is built once per policy object (a snapshot's policy is
 *      immutable) and cached in a WeakMap; `check` builds them all at engine build so a bad CA
 *      is a config error there.
 *   3. `optionsFor` is what `connectBackend` hands to `tls.connect`: the context, the server
 *      name (the `sni` key, else the backend's hostname; never an IP), whether to verify, and
 *      ALPN for the protocol spoken inside (`http1` → http/1.1, `h2c`/`h2` → h2). The http2
 *      panel's `protocol: h2` clusters without a `tls:` key use `DEFAULT_CLUSTER_TLS` (system
 *      roots, verified, SNI from the backend's hostname).
 *
 * TLS passthrough connections never get a second layer: their bytes are TLS already.
 */
import { isIP } from 'node:net';
import { createSecureContext, type SecureContext } from 'node:tls';
import { SwitchboardError } from '../base/errors.ts';
import type { ClusterPolicy, ClusterTls, Protocol } from '../contracts/types.ts';
import { readPemSync, reasonOf } from './files.ts';

/** What `tls.connect` gets for one backend connection. */
export interface UpstreamTlsOptions {
  readonly secureContext: SecureContext;
  /** SNI to send and the name the certificate must carry; undefined = none (IP backends). */
  readonly servername: string | undefined;
  readonly rejectUnauthorized: boolean;
  readonly ALPNProtocols: string[] | undefined;
}

const HTTP1_ALPN = ['http/1.1'];
const H2_ALPN = ['h2'];

/** Upstream TLS of a cluster that asks for TLS (`protocol: h2`) without a `tls:` key. */
export const DEFAULT_CLUSTER_TLS: ClusterTls = Object.freeze({ verify: true });

/** Per-engine builder of upstream TLS options. */
export class UpstreamTls {
  readonly #dir: string;
  readonly #contexts = new WeakMap<ClusterTls, SecureContext>();

  constructor(configDir: string) {
    this.#dir = configDir;
  }

  /** The cluster's context, built on first use; throws an Error naming the CA file on failure. */
  #context(tls: ClusterTls): SecureContext {
    let ctx = this.#contexts.get(tls);
    if (ctx === undefined) {
      try {
        ctx = createSecureContext(tls.ca === undefined ? {} : { ca: readPemSync(this.#dir, tls.ca) });
      } catch (e) {
        throw new SwitchboardError('SWB_ERR_CERTIFICATE', `tls.ca: ${reasonOf(e)}`);
      }
      this.#contexts.set(tls, ctx);
    }
    return ctx;
  }

  /** TLS options for connecting `backendHost` under `policy`; undefined = plain TCP. */
  optionsFor(policy: ClusterPolicy, backendHost: string, protocol: Protocol): UpstreamTlsOptions | undefined {
    const tls = policy.tls;
    if (tls === undefined || protocol === 'tls') return undefined;
    return this.optionsForTls(tls, backendHost, protocol);
  }

  /** TLS options for connecting `backendHost` under the cluster TLS settings `tls`. */
  optionsForTls(tls: ClusterTls, backendHost: string, protocol: Protocol): UpstreamTlsOptions {
    return {
      secureContext: this.#context(tls),
      servername: tls.sni ?? (isIP(backendHost) === 0 ? backendHost : undefined),
      rejectUnauthorized: tls.verify,
      ALPNProtocols: protocol === 'http1' ? HTTP1_ALPN : protocol === 'tls' ? undefined : H2_ALPN,
    };
  }

  /** Builds every cluster's context now; returns one error line per cluster that failed. */
  check(clusters: Iterable<{ readonly name: string; readonly policy: ClusterPolicy }>): string[] {
    const errors: string[] = [];
    for (const { name, policy } of clusters) {
      if (policy.tls === undefined) continue;
      try {
        this.#context(policy.tls);
      } catch (e) {
        errors.push(`${name}.${reasonOf(e)}`);
      }
    }
    return errors;
  }
}
