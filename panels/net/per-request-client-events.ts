/**
 * The client socket's listeners of a per-request connection: one function per event shared by
 * every connection, which finds its connection's `ClientListener` (the driver) in a symbol slot
 * on the socket. No closure per connection for them (issue 18), and removeListener names them.
 * A slot rather than a WeakMap keyed by the socket: a WeakMap lookup on every read is a hash
 * probe (issue 18), and a young socket's entry an ephemeron the scavenger revisits.
 *
 * This file knows nothing of the driver: a listener is anything with the four methods below.
 * Each method guards its own step (a throw closes that connection, never the process).
 */
import type { Socket } from 'node:net';

/** What hears a client socket's events (the driver of its connection). */
export interface ClientListener {
  onClientData(chunk: Buffer): void;
  /** A FIN. */
  onClientEnd(): void;
  onClientError(err: Error): void;
  onClientClose(): void;
}

const kListener = Symbol('switchboard.perRequest');
type ListenedSocket = Socket & { [kListener]?: ClientListener };

function clientData(this: ListenedSocket, chunk: Buffer): void {
  this[kListener]?.onClientData(chunk);
}
function clientEnd(this: ListenedSocket): void {
  this[kListener]?.onClientEnd();
}
function clientError(this: ListenedSocket, err: Error): void {
  this[kListener]?.onClientError(err);
}
function clientClose(this: ListenedSocket): void {
  this[kListener]?.onClientClose();
}

/** Makes `listener` hear `client`'s data, end, error and close. */
export function listenToClient(client: Socket, listener: ClientListener): void {
  (client as ListenedSocket)[kListener] = listener;
  client.on('data', clientData);
  client.on('end', clientEnd);
  client.on('error', clientError);
  client.on('close', clientClose); // 'close' comes once: no `once` wrapper per connection
}

/** The connection stops reading requests (it answers or closes): its 'data' is no longer heard. */
export function stopReadingClient(client: Socket): void {
  client.removeListener('data', clientData);
}

/** The connection became a tunnel (its splice reads the client now): only errors and close are heard. */
export function handClientToTunnel(client: Socket): void {
  client.removeListener('data', clientData);
  client.removeListener('end', clientEnd);
}
