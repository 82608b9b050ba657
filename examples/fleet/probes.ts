/**
 * How run.ts knows a part serves: one small client per protocol, each resolving false (or
 * undefined) instead of throwing, so `waitUntil` can poll it.
 */
import { X509Certificate } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { get as httpsGet } from 'node:https';
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

/** A GET on loopback: status and body, or undefined when it fails. */
export function httpGet(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string } | undefined> {
  return new Promise((resolve) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', () => resolve(undefined));
    });
    req.setTimeout(3000, () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

/** A GET over HTTPS trusting `ca` only: the body of a 200, or undefined. */
export function httpsText(url: string, ca: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const req = httpsGet(url, { ca, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve(res.statusCode === 200 ? body : undefined));
      res.on('error', () => resolve(undefined));
    });
    req.setTimeout(3000, () => req.destroy());
    req.on('error', () => resolve(undefined));
  });
}

/** True when a PING on `port` gets +PONG (Redis). */
export function redisPong(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = netConnect({ port, host: '127.0.0.1' });
    let text = '';
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(1000, () => done(false));
    s.on('error', () => done(false));
    s.on('connect', () => s.write('PING\r\n'));
    s.on('data', (d) => {
      text += d.toString();
      if (text.includes('\r\n')) done(text.startsWith('+PONG'));
    });
  });
}

/**
 * A TLS handshake to `port` for `name`, verified against `ca`: the SHA-256 fingerprint of the
 * certificate served, or undefined (refused, not verified). `preface` is written first (a PROXY
 * header, to reach a router's listener without HAProxy).
 */
export function verifiedFingerprint(
  port: number,
  name: string,
  ca: string,
  preface?: Buffer,
): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = netConnect({ port, host: '127.0.0.1' });
    socket.on('error', () => resolve(undefined));
    socket.setTimeout(5000, () => socket.destroy());
    socket.once('connect', () => {
      if (preface !== undefined) socket.write(preface);
      const tls = tlsConnect({ socket, servername: name, ca, ALPNProtocols: ['http/1.1'] }, () => {
        const raw = tls.getPeerX509Certificate()?.raw;
        resolve(tls.authorized && raw !== undefined ? new X509Certificate(raw).fingerprint256 : undefined);
        tls.destroy();
      });
      tls.on('error', () => resolve(undefined));
      tls.on('close', () => resolve(undefined));
    });
    socket.on('close', () => resolve(undefined));
  });
}
