/**
 * One ACME order for one host name, with `acme-client` (RFC 8555: account, order, challenge,
 * finalisation) doing the protocol; the router only answers the challenge, through the runtime's
 * IssuedCertificates (src/tls/issued.ts), on every thread, before the CA is told to validate:
 *
 *   createOrder ─► authz ─► challengeCreateFn: publish the answer (and wait for the workers)
 *               ─► completeChallenge ─► CA validates against the router ─► challengeRemoveFn
 *               ─► finalize(CSR) ─► certificate chain (PEM)
 *
 * TLS-ALPN-01: the challenge certificate (RFC 8737: acmeIdentifier extension, critical) is
 * built by acme-client and served to ClientHellos offering `acme-tls/1` for the name on the
 * listener (src/listener/acme-alpn.ts). HTTP-01: the key authorization is answered on plaintext
 * listeners at `/.well-known/acme-challenge/<token>` before routing (src/routing/route.ts).
 */
import * as acme from 'acme-client';
import { SwitchboardError } from '../../src/base/errors.ts';
import type { IssuedUpdate } from '../../src/tls/issued.ts';

/** Publishes an update on every thread; resolves once all of them apply it. */
export type IssuedSink = (u: IssuedUpdate) => Promise<void>;

/** What one order needs. */
export interface OrderSpec {
  readonly client: acme.Client;
  readonly listener: string;
  readonly name: string;
  readonly challenge: 'tls-alpn-01' | 'http-01';
  readonly email: string | undefined;
  readonly sink: IssuedSink;
}

/** Orders a certificate for `spec.name`; resolves with the chain and its new key (PEM). */
export async function orderCertificate(spec: OrderSpec): Promise<{ cert: string; key: string }> {
  const { listener, sink } = spec;
  const [key, csr] = await acme.crypto.createCsr({ commonName: spec.name, altNames: [spec.name] });
  const cert = await spec.client.auto({
    csr,
    ...(spec.email === undefined ? {} : { email: spec.email }),
    termsOfServiceAgreed: true,
    challengePriority: [spec.challenge],
    // The CA validates against the router itself; a local self-check would only add a round trip.
    skipChallengeVerification: true,
    challengeCreateFn: async (authz, challenge, keyAuthorization) => {
      const name = authz.identifier.value.toLowerCase();
      if ((challenge.type as string) === 'tls-alpn-01') {
        const [ckey, ccert] = await acme.crypto.createAlpnCertificate(authz, keyAuthorization);
        await sink({ kind: 'tls-challenge', listener, name, cert: ccert.toString(), key: ckey.toString() });
      } else if (challenge.type === 'http-01') {
        await sink({ kind: 'http-challenge', token: challenge.token, keyAuthorization });
      } else
        throw new SwitchboardError('SWB_ERR_ACME', `acme: the CA offered no ${spec.challenge} challenge for ${name}`);
    },
    challengeRemoveFn: async (authz, challenge) => {
      const name = authz.identifier.value.toLowerCase();
      if ((challenge.type as string) === 'tls-alpn-01') await sink({ kind: 'tls-challenge-done', listener, name });
      else if (challenge.type === 'http-01') await sink({ kind: 'http-challenge-done', token: challenge.token });
    },
  });
  return { cert, key: key.toString() };
}
