/**
 * The listener pipeline's hand-over of a whole connection to a per-stream engine: the http2
 * panel's `StreamRouter`, which app/panels.ts lends a splicing panel for its `h2c: route`
 * listeners (a panel never imports another panel).
 */
import type { PanelRuntime } from '../panel/contract.ts';
import type { Connection } from './connection.ts';

/**
 * Takes whole HTTP/2 connections and routes every stream on its own (the http2 panel's
 * engine: terminate, `decideRoute` per stream, forward). A splicing panel that is given one
 * hands it the h2c connections of its `h2c: route` listeners (DESIGN: the documented exception
 * to byte-for-byte splicing, as on the http2 panel). One per panel runtime.
 */
export interface StreamRouter {
  /**
   * Takes `c` over from accept: every byte read from its socket so far has been put back
   * (`unshift`); `c.done()` runs when the socket closes, and every stream writes its own line.
   */
  serve(c: Connection): void;
  /** Shutdown: GOAWAY to every session (open streams finish) and idle HTTP/1.1 sockets closed. */
  drain(): void;
  /** Once the panel's connections are gone: upstream sessions get a short grace, then close. */
  close(): Promise<void>;
  /** Everything now. */
  destroy(): void;
}

/** Builds the stream router of one panel runtime (app/panels.ts composes it into a splicing panel). */
export type StreamRouterFactory = (runtime: PanelRuntime) => StreamRouter;
