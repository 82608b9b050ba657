/**
 * Config generators for the TLS passthrough group (scenario `tlsconn`): an nginx TLS backend
 * that never resumes sessions (every connection is a full handshake), HAProxy in TCP mode
 * routing on `req.ssl_sni`, and Switchboard's net panel with a `tls: passthrough` listener.
 */
import { nginxHead } from './peers.ts';
import { SMALL_BODY, SMALL_PATH } from './scenarios-shared.ts';

/** The SNI every TLS client sends; it must resolve to 127.0.0.1 (wrk takes SNI from the URL). */
export const TLS_HOST = 'localhost';

/** nginx as the TLS backend: /small over HTTPS, no session cache and no tickets. */
export function nginxTlsBackendConf(dir: string, port: number, cert: string, key: string): string {
  return `${nginxHead(dir, false)}
http {
  access_log off;
  keepalive_timeout 300s;
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${port} ssl backlog=4096;
    ssl_certificate ${cert};
    ssl_certificate_key ${key};
    ssl_session_cache off;
    ssl_session_tickets off;
    location = ${SMALL_PATH} { default_type text/plain; return 200 ${JSON.stringify(SMALL_BODY)}; }
  }
}
`;
}

/** HAProxy in TCP mode: wait for the ClientHello, route on its SNI, one thread. */
export function haproxySniConf(port: number, backendPort: number): string {
  return `global
  nbthread 1
  maxconn 9000
defaults
  mode tcp
  timeout connect 5s
  timeout client 300s
  timeout server 300s
frontend f
  bind 127.0.0.1:${port}
  tcp-request inspect-delay 5s
  tcp-request content accept if { req.ssl_hello_type 1 }
  use_backend b if { req.ssl_sni -i ${TLS_HOST} }
backend b
  server s1 127.0.0.1:${backendPort}
`;
}

/** Switchboard's net panel with a passthrough listener; the file book routes every SNI. */
export function switchboardTlsConf(port: number): string {
  return `panel: net
listeners:
  - { name: bench, address: 127.0.0.1:${port}, tls: passthrough }
routing: per-connection
limits: { idleTimeout: 300s, maxConnections: 9000, drainTimeout: 1s }
operator: { name: round-robin }
addressBook: { name: file, path: servers.yaml }
log: { level: warn, access: "off" }
`;
}
