/**
 * A full garbage collection in the router child on demand, through its inspector (the router
 * exposes no GC of its own): the child runs with `--inspect=127.0.0.1:0`, and `collect()` sends
 * `HeapProfiler.collectGarbage` to the main thread and, through the `NodeWorker` domain, to every
 * worker thread. RSS read after it measures what is retained rather than garbage not yet collected.
 */
import { WebSocket } from 'ws';

/** An open inspector session that can force a GC in every thread. */
export interface GcSession {
  collect(): Promise<void>;
  close(): void;
}

interface Message {
  id?: number;
  method?: string;
  params?: { sessionId?: string; message?: string };
}

/** Connects to the inspector at `url` (from the child's "Debugger listening on" line). */
export async function connectGc(url: string): Promise<GcSession> {
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  ws.on('error', () => {});
  let nextId = 1;
  const waiting = new Map<number, () => void>();
  const workers = new Set<string>();
  ws.on('message', (data) => {
    const m = JSON.parse(String(data)) as Message;
    if (m.method === 'NodeWorker.attachedToWorker' && m.params?.sessionId) workers.add(m.params.sessionId);
    else if (m.method === 'NodeWorker.detachedFromWorker' && m.params?.sessionId) workers.delete(m.params.sessionId);
    const inner =
      m.method === 'NodeWorker.receivedMessageFromWorker' ? (JSON.parse(m.params?.message ?? '{}') as Message) : m;
    if (inner.id !== undefined) waiting.get(inner.id)?.();
  });
  const call = (method: string, params: object = {}, sessionId?: string) =>
    new Promise<void>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error(`inspector: ${method} timed out`));
      }, 15_000);
      waiting.set(id, () => {
        clearTimeout(timer);
        waiting.delete(id);
        resolve();
      });
      const message = JSON.stringify({ id, method, params });
      if (sessionId === undefined) ws.send(message);
      else
        ws.send(
          JSON.stringify({ id: nextId++, method: 'NodeWorker.sendMessageToWorker', params: { sessionId, message } }),
        );
    });
  await call('NodeWorker.enable', { waitForDebuggerOnStart: false });
  return {
    async collect() {
      await Promise.all([
        call('HeapProfiler.collectGarbage'),
        ...[...workers].map((s) => call('HeapProfiler.collectGarbage', {}, s)),
      ]);
    },
    close: () => ws.close(),
  };
}
