/**
 * What the `http2` panel cannot honour, refused at config load (`check`, `start`, reload) instead
 * of being ignored at run time. The panel terminates HTTP/2 and routes every stream, so options
 * that only make sense for a byte splice are refused here; every listener and cluster option the
 * two pipelines implement (caps, PROXY in, TLS termination and clientAuth, upstream TLS, outbound
 * PROXY…) is honoured and not listed. docs/panels.md "Panels and options" has the whole table.
 */
import type { Config } from '../../src/config/schema.ts';

/** `http2`, or `worker with engine http2` when the worker panel runs this one in its threads. */
function label(config: Config): { panel: string; instead: string } {
  return config.panel.name === 'http2'
    ? { panel: 'panel http2', instead: 'panel net' }
    : { panel: `panel ${config.panel.name} with engine http2`, instead: 'engine net' };
}

/** One line per option of `config` the http2 panel cannot honour, with its config path. */
export function http2Refusals(config: Config): string[] {
  const { panel, instead } = label(config);
  const out: string[] = [];
  config.listeners.forEach((l, i) => {
    if (l.tls === 'passthrough') {
      out.push(`listeners[${i}].tls: passthrough is not supported by ${panel} (it terminates HTTP/2; use ${instead})`);
    }
    if (l.allowConnect) {
      out.push(
        `listeners[${i}].allowConnect: CONNECT tunnels are not supported by ${panel} (it answers 405; use ${instead})`,
      );
    }
  });
  if (config.routing === 'per-connection') {
    out.push(`routing: per-connection is not supported by ${panel} (it routes every stream; use ${instead})`);
  }
  if (config.log.accessMode === 'per-connection') {
    out.push(
      `log.accessMode: per-connection is not supported by ${panel} (it writes one line per request; use ${instead})`,
    );
  }
  if (config.limits.maxConnectionLifetime > 0) {
    out.push(
      `limits.maxConnectionLifetime: is not supported by ${panel} (client sessions end on idleTimeout or GOAWAY; use ${instead})`,
    );
  }
  return out;
}
