/**
 * Config generators for the HTTP/2 group (scenario `h2`): an nginx backend speaking h2c (prior
 * knowledge) on one port and HTTP/1.1 on another, HAProxy with an h2c front end and h2c to the
 * backend, nginx with an h2c front end proxying over HTTP/1.1 (nginx cannot proxy HTTP/2), and
 * Switchboard's http2 panel with an h2c cluster.
 */
import { nginxHead } from './peers.ts';
import { SMALL_BODY, SMALL_PATH } from './scenarios-shared.ts';

function h2Common(dir: string): string {
  return [
    'access_log off;',
    'keepalive_requests 10000000;',
    'keepalive_timeout 300s;',
    'http2_max_concurrent_streams 1000;',
    'http2_max_requests 10000000;',
    `client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy;`,
    `fastcgi_temp_path ${dir}/fcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;`,
  ].join('\n  ');
}

/** nginx as the h2 backend: /small on `h2Port` (h2c) and on `h1Port` (HTTP/1.1). */
export function nginxH2BackendConf(dir: string, h2Port: number, h1Port: number): string {
  const small = `location = ${SMALL_PATH} { default_type text/plain; return 200 ${JSON.stringify(SMALL_BODY)}; }`;
  return `${nginxHead(dir, false)}
http {
  ${h2Common(dir)}
  server { listen 127.0.0.1:${h2Port} http2 backlog=4096; ${small} }
  server { listen 127.0.0.1:${h1Port} backlog=4096; ${small} }
}
`;
}

/** nginx with an h2c front end, proxying to the backend's HTTP/1.1 port over keep-alive. */
export function nginxH2FrontConf(dir: string, port: number, h1Port: number): string {
  return `${nginxHead(dir, false)}
http {
  ${h2Common(dir)}
  upstream backend { server 127.0.0.1:${h1Port}; keepalive 64; }
  server {
    listen 127.0.0.1:${port} http2 backlog=4096;
    location / {
      proxy_pass http://backend;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
  }
}
`;
}

/** HAProxy in HTTP mode with an h2c front end and h2c to the backend, one thread. */
export function haproxyH2Conf(port: number, backendPort: number): string {
  return `global
  nbthread 1
  maxconn 9000
defaults
  mode http
  timeout connect 5s
  timeout client 300s
  timeout server 300s
  timeout http-keep-alive 300s
  http-reuse always
frontend f
  bind 127.0.0.1:${port} proto h2
  default_backend b
backend b
  server s1 127.0.0.1:${backendPort} proto h2
`;
}

/** Switchboard's http2 panel; the file book sends every host to the backend over h2c. */
export function switchboardH2Conf(port: number): string {
  return `panel: http2
listeners:
  - { name: bench, address: 127.0.0.1:${port} }
limits: { idleTimeout: 300s, maxConnections: 9000, drainTimeout: 1s }
operator: { name: round-robin }
addressBook: { name: file, path: servers.yaml }
log: { level: warn, access: "off" }
`;
}

/** The file book for the http2 row: every host to the backend's h2c port. */
export function switchboardH2Servers(backendPort: number): string {
  return `- { host: "*", backends: [127.0.0.1:${backendPort}], protocol: h2c }\n`;
}
