/**
 * TLS primitives (reference bfe.md §1.6 "TLS session", plus our `ses_tls_alpn_in`). They are
 * false on plaintext connections and until the panel fills `sni`, `alpn` and `tls`.
 */
import { listMatcher, str } from './matchers.ts';
import { type Condition, type PrimitiveTable, params } from './types.ts';

/** TLS session primitives. */
export const tlsPrimitives: PrimitiveTable = {
  ses_tls_sni_in: {
    params: params('S:hosts'),
    build: (a): Condition => {
      const match = listMatcher('in', str(a, 0), true);
      return (r) => r.secure && r.sni !== undefined && match(r.sni);
    },
  },
  ses_tls_client_auth: { params: [], build: (): Condition => (r) => r.tls?.clientAuth === true },
  ses_tls_client_ca_in: {
    params: params('S:names'),
    build: (a): Condition => {
      // CA names are case-sensitive (BFE), and only count once the client certificate was verified.
      const names = new Set(str(a, 0).split('|'));
      return (r) => {
        const tls = r.tls;
        if (tls === undefined || !tls.clientAuth) return false;
        const cas = tls.clientCaNames;
        for (let i = 0; i < cas.length; i++) if (names.has(cas[i] as string)) return true;
        return false;
      };
    },
  },
  ses_tls_alpn_in: {
    params: params('S:protocols'),
    build: (a): Condition => {
      // True when the client offered any listed ALPN protocol id (ids are case-sensitive bytes).
      const wanted = new Set(str(a, 0).split('|'));
      return (r) => {
        const alpn = r.alpn;
        for (let i = 0; i < alpn.length; i++) if (wanted.has(alpn[i] as string)) return true;
        return false;
      };
    },
  },
};
