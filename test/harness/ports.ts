/**
 * Ports from the outside: free ones to hand a process, and whether a port still accepts (a
 * real connect(), for tests that stop a process and check it let go of its listeners).
 */
import { connect, createServer } from 'node:net';

/** `n` ports that nobody listened on a moment ago (on 127.0.0.1). */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: n }, () => {
      const s = createServer();
      return new Promise<typeof s>((r) => s.listen(0, '127.0.0.1', () => r(s)));
    }),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

/** Whether a TCP connect() to 127.0.0.1:`port` is accepted (false: refused). */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/**
 * Resolves once every port refuses connect(), polled every 50 ms; rejects after `timeoutMs`
 * naming the ports that still accept.
 */
export async function portsRefused(ports: readonly number[], timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const open = [];
    for (const p of ports) if (await accepts(p)) open.push(p);
    if (open.length === 0) return;
    if (Date.now() > until) throw new Error(`ports still accepting after ${timeoutMs} ms: ${open.join(', ')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
