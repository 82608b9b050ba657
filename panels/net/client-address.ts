/** The access log's `client` field for a socket: moved to the listener pipeline (src/listener/). */
export { clientAddress } from '../../src/listener/client-address.ts';
