/**
 * `host:port` addresses in config: `127.0.0.1:8080`, `[::1]:8080`, `backend.internal:80`.
 */
import { z } from 'zod';

export interface HostPort {
  readonly host: string;
  readonly port: number;
}

/** Splits `host:port` (IPv6 in brackets); undefined when malformed. Port 0 allowed when `allowZero`. */
export function parseHostPort(value: string, allowZero = false): HostPort | undefined {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9_.-]+)):(\d{1,5})$/.exec(value);
  if (m === null) return undefined;
  const port = Number(m[3]);
  if (port > 65535 || (port === 0 && !allowZero)) return undefined;
  return { host: (m[1] ?? m[2])!, port };
}

/** `host:port` for display and registry keys (IPv6 bracketed). */
export function formatHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

function hostPort(allowZero: boolean) {
  return z.string().transform((v, ctx) => {
    const hp = parseHostPort(v, allowZero);
    if (hp === undefined) {
      ctx.addIssue({ code: 'custom', message: `expected host:port, got ${JSON.stringify(v)}` });
      return z.NEVER;
    }
    return hp;
  });
}

/** A backend address (port 1–65535). */
export const backendAddress = hostPort(false);
/** A listen address (port 0 allowed: pick a free port). */
export const listenAddress = hostPort(true);
