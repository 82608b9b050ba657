/** PROXY protocol v1/v2: inbound parsing and outbound encoding (see README.md for byte layouts). */
export { crc32c } from './crc32c.ts';
export {
  type EncodeRefusal,
  encodeProxyV1,
  encodeProxyV2,
  encodeProxyV2Local,
  isEncodeRefusal,
  type ProxyV2Options,
  tryEncodeProxyV1,
  tryEncodeProxyV2,
  V2_ALPN_MAX_BYTES,
  V2_AUTHORITY_MAX_BYTES,
  V2_MAX_LENGTH,
} from './encode.ts';
export type { ProxyAccept, ProxyEndpoint, ProxyFamily, ProxyHeader } from './header.ts';
export { parseProxyHeader } from './parse.ts';
export { parseV1, V1_MAX_LENGTH } from './v1.ts';
export { PP2_TYPE, parseV2, V2_DEFAULT_MAX_BYTES, V2_SIGNATURE } from './v2.ts';
