/** The `http2` panel: terminates HTTP/2 and routes every stream (see README.md). */
export { type Http2Panel, http2Panel } from './server.ts';
