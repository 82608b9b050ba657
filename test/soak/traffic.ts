/**
 * The soak's client kinds, one exchange each; every one rejects with a message naming its kind
 * when the answer is wrong, so the soak can count successes and classify failures.
 */
import { randomBytes } from 'node:crypto';
import { type Agent, request } from 'node:http';
import { connect as h2connect } from 'node:http2';
import { type Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { connect as tlsConnect } from 'node:tls';
import { WebSocket } from 'ws';

/** One plain or TLS-terminated HTTP/1 exchange: 200 expected; with a body, its length echoed. */
export function httpExchange(
  port: number,
  host: string,
  agent: Agent | HttpsAgent | false,
  body?: Buffer,
  tls?: { ca: string; servername: string },
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const options = { port, host: '127.0.0.1', method: body ? 'POST' : 'GET', path: '/', headers: { host }, agent };
    const onResponse = (res: import('node:http').IncomingMessage) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => {
        if (res.statusCode !== 200)
          reject(new Error(`status ${res.statusCode} ${res.headers['x-switchboard-error'] ?? ''}`));
        else if (body !== undefined && Number(text) !== body.length) reject(new Error(`upload: backend got ${text}`));
        else resolve();
      });
      res.on('error', reject);
    };
    const req =
      tls === undefined
        ? request(options as import('node:http').RequestOptions, onResponse)
        : httpsRequest(
            { ...options, ca: tls.ca, servername: tls.servername } as import('node:https').RequestOptions,
            onResponse,
          );
    req.setTimeout(10_000, () => req.destroy(new Error('request timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

/** A WebSocket session of 10 echoed messages. */
export function wsSession(port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const sock = new WebSocket(`ws://127.0.0.1:${port}/`, { headers: { host: 'ws.test' } });
    let echoed = 0;
    sock.on('open', () => sock.send('m0'));
    sock.on('message', (m) => {
      if (String(m) !== `m${echoed}`) return reject(new Error(`ws: echo ${String(m)}`));
      if (++echoed === 10) sock.close();
      else sock.send(`m${echoed}`);
    });
    sock.on('close', () => (echoed === 10 ? resolve() : reject(new Error(`ws: closed after ${echoed}`))));
    sock.on('error', reject);
  });
}

/** One h2c session of 5 streams to `h2c.test`. */
export function h2cSession(port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const session = h2connect(`http://127.0.0.1:${port}`);
    session.on('error', reject);
    let done = 0;
    for (let i = 0; i < 5; i++) {
      const s = session.request({ ':path': '/', ':authority': 'h2c.test' });
      let text = '';
      s.on('data', (c: Buffer) => (text += c.toString()));
      s.on('error', reject);
      s.on('end', () => {
        if (text !== 'h2c') reject(new Error(`h2c: ${text}`));
        if (++done === 5) {
          session.close();
          resolve();
        }
      });
      s.end();
    }
  });
}

/**
 * TLS passthrough: a verified handshake with the backend's certificate (SNI `servername`, CA
 * `ca`) through the router, 32 KiB of random bytes echoed byte for byte, then a clean close.
 */
export function tlsEcho(port: number, servername: string, ca: string): Promise<void> {
  const payload = randomBytes(32 * 1024);
  return new Promise<void>((resolve, reject) => {
    const socket = tlsConnect({ port, host: '127.0.0.1', servername, ca });
    const got: Buffer[] = [];
    let n = 0;
    const timer = setTimeout(() => socket.destroy(new Error('tls: timeout')), 10_000);
    socket.on('secureConnect', () => socket.write(payload));
    socket.on('data', (c: Buffer) => {
      got.push(c);
      n += c.length;
      if (n >= payload.length) socket.end();
    });
    socket.on('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`tls: ${e.message}`));
    });
    socket.on('close', () => {
      clearTimeout(timer);
      if (Buffer.concat(got).equals(payload)) resolve();
      else reject(new Error(`tls: echoed ${n} of ${payload.length} bytes`));
    });
  });
}
