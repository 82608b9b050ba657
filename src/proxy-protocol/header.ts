/**
 * The shape every PROXY protocol parser returns, and the single error constructor they share.
 */
import { SwitchboardError } from '../base/errors.ts';

/** One side of a proxied connection as the PROXY header advertises it. */
export interface ProxyEndpoint {
  ip: string;
  port: number;
}

/** Address families a header can announce (v1 only has tcp4, tcp6 and unknown). */
export type ProxyFamily = 'tcp4' | 'tcp6' | 'unknown' | 'unix' | 'udp4' | 'udp6';

/** A parsed inbound PROXY header; strip `length` bytes, the rest is the client's stream. */
export interface ProxyHeader {
  version: 1 | 2;
  command: 'proxy' | 'local';
  family: ProxyFamily;
  source?: ProxyEndpoint;
  destination?: ProxyEndpoint;
  /** v2 TLVs by type (NOOP dropped); values are copies, never views into the caller's buffer. */
  tlvs: ReadonlyMap<number, Buffer>;
  /** PP2_TYPE_AUTHORITY (the client's SNI) decoded as UTF-8, when present. */
  authority?: string;
  /** PP2_TYPE_ALPN decoded as latin1 (ALPN ids are opaque bytes), when present. */
  alpn?: string;
  length: number;
}

/** Which header versions a listener accepts (config `proxyProtocol`). */
export type ProxyAccept = 'v1' | 'v2' | 'any';

/** Throws the one error code of this module; `msg` says what and where. */
export function fail(msg: string): never {
  throw new SwitchboardError('SWB_ERR_PROXY_HEADER', `proxy protocol: ${msg}`);
}

/** A shared empty TLV map for headers that carry none. */
export const NO_TLVS: ReadonlyMap<number, Buffer> = new Map();
