/**
 * A keep-alive HTTP/1.1 client on one connection, for tests that send its requests one at a time
 * and ask which backend answered each (the `x-backend` header of test/harness/backend.ts).
 */
import { connect, type Socket } from 'node:net';
import { eventually } from './router.ts';

/** One client connection to 127.0.0.1:port; requests are sent one at a time with `host`. */
export class KeepAliveClient {
  readonly #s: Socket;
  readonly #host: string;
  #text = '';
  constructor(port: number, host = 'www.example.test') {
    this.#host = host;
    this.#s = connect({ port, host: '127.0.0.1' });
    this.#s.on('error', () => {});
    this.#s.on('data', (d) => (this.#text += d.toString('latin1')));
  }
  /** Sends `GET path` (keep-alive); the response read so far is forgotten. */
  send(path: string): void {
    this.#text = '';
    this.#s.write(`GET ${path} HTTP/1.1\r\nHost: ${this.#host}\r\n\r\n`);
  }
  /** The `x-backend` of the response to the last request (waits up to 4 s for a whole one). */
  async answer(): Promise<string> {
    await eventually(() => /x-backend: \w+[\s\S]*\r\n\r\n\{.*\}$/i.test(this.#text), 4_000, 'a response');
    return /x-backend: (\w+)/i.exec(this.#text)![1]!;
  }
  close(): void {
    this.#s.destroy();
  }
}
