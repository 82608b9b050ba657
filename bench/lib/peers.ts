/**
 * Config generators for the peers (pure functions of ports and folders). Every peer listens on
 * loopback only and runs one worker, like the single event loop of the Node targets; timeouts
 * are long enough to hold the idle scenario's connections.
 */
import { BIG_PATH, SMALL_BODY, SMALL_PATH } from './scenarios-shared.ts';

const NGINX_STREAM_MODULE = '/usr/lib/nginx/modules/ngx_stream_module.so';

/** The head of every nginx config: one worker, generous limits, errors into `dir`. */
export function nginxHead(dir: string, stream: boolean): string {
  return [
    stream ? `load_module ${NGINX_STREAM_MODULE};` : '',
    process.getuid?.() === 0 ? 'user root;' : '',
    'worker_processes 1;',
    'worker_rlimit_nofile 40000;',
    `error_log ${dir}/error.log warn;`,
    'events { worker_connections 20000; multi_accept on; }',
  ].join('\n');
}

function nginxHttpCommon(dir: string): string {
  return [
    'access_log off;',
    'keepalive_requests 10000000;',
    'keepalive_timeout 300s;',
    `client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy;`,
    `fastcgi_temp_path ${dir}/fcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;`,
  ].join('\n  ');
}

/** Whether nginx's stream module is on disk. */
export const nginxStreamModule = NGINX_STREAM_MODULE;

/** nginx as the backend: /small returns a fixed body, /1m a 1 MiB file from `wwwDir`. */
export function nginxBackendConf(dir: string, port: number, wwwDir: string): string {
  return `${nginxHead(dir, false)}
http {
  ${nginxHttpCommon(dir)}
  sendfile on;
  tcp_nopush off;
  server {
    listen 127.0.0.1:${port} backlog=4096;
    location = ${SMALL_PATH} { default_type text/plain; return 200 ${JSON.stringify(SMALL_BODY)}; }
    location = ${BIG_PATH} { root ${wwwDir}; default_type application/octet-stream; }
  }
}
`;
}

/** nginx stream (TCP) proxy. */
export function nginxStreamConf(dir: string, port: number, backendPort: number): string {
  return `${nginxHead(dir, true)}
stream {
  server {
    listen 127.0.0.1:${port} backlog=4096;
    proxy_pass 127.0.0.1:${backendPort};
    proxy_timeout 300s;
  }
}
`;
}

/** nginx HTTP reverse proxy with a keep-alive upstream pool. */
export function nginxHttpConf(dir: string, port: number, backendPort: number): string {
  return `${nginxHead(dir, false)}
http {
  ${nginxHttpCommon(dir)}
  upstream backend { server 127.0.0.1:${backendPort}; keepalive 256; }
  server {
    listen 127.0.0.1:${port} backlog=4096;
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

/** HAProxy in `tcp` or `http` mode, one thread unless `threads` says otherwise. */
export function haproxyConf(mode: 'tcp' | 'http', port: number, backendPort: number, threads = 1): string {
  return `global
  nbthread ${threads}
  maxconn 9000
defaults
  mode ${mode}
  timeout connect 5s
  timeout client 300s
  timeout server 300s
  ${mode === 'http' ? 'timeout http-keep-alive 300s\n  http-reuse always' : ''}
frontend f
  bind 127.0.0.1:${port}
  default_backend b
backend b
  server s1 127.0.0.1:${backendPort}
`;
}

/**
 * Switchboard's config for the `net` panel row (logs off). Per-request routing budgets 2 + 2
 * descriptors per connection (idle upstream links, src/process/nofile.ts), so its cap is halved to fit
 * the machine's 20,000 descriptors; the idle scenario holds 4,000.
 */
export function switchboardConf(port: number, routing: 'per-connection' | 'per-request'): string {
  const maxConnections = routing === 'per-request' ? 4500 : 9000;
  return `panel: net
listeners:
  - { name: bench, address: 127.0.0.1:${port} }
routing: ${routing}
limits: { idleTimeout: 300s, maxConnections: ${maxConnections}, drainTimeout: 1s }
operator: { name: round-robin }
addressBook: { name: file, path: servers.yaml }
log: { level: warn, access: "off" }
`;
}

/** The file book for the Switchboard row: every host goes to the one backend. */
export function switchboardServers(backendPort: number): string {
  return `- { host: "*", backends: [127.0.0.1:${backendPort}] }\n`;
}
