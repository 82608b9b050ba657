/**
 * `startSlowAccept()`: a real backend whose connects hang until `open()`: a listener with backlog
 * 0 whose accept queue is filled first, so the kernel drops further SYNs (the client's connect
 * completes on a SYN retransmit, about 1 s or 3 s in). Once open it accepts every connection and
 * answers each one when the client has finished sending (its FIN) or after `waitMs`:
 * `HTTP/1.1 200 OK` with the body `eof <bytes>` or `timeout <bytes>`, then closes.
 */
import { fullBacklog } from './backend.ts';

const SERVER = `
import socket, sys, threading
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(0)
print(s.getsockname()[1], flush=True)
sys.stdin.readline()
wait = float(sys.argv[1])
def serve(c):
    c.settimeout(wait)
    got = 0
    how = "eof"
    try:
        while True:
            d = c.recv(65536)
            if not d:
                break
            got += len(d)
    except socket.timeout:
        how = "timeout"
    body = ("%s %d" % (how, got)).encode()
    try:
        c.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: %d\\r\\nConnection: close\\r\\n\\r\\n" % len(body) + body)
        c.close()
    except OSError:
        pass
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
`;

export interface SlowAccept {
  readonly port: number;
  readonly address: string;
  /** Starts accepting (the connects waiting complete on their next SYN retransmit). */
  open(): void;
  close(): Promise<void>;
}

/** Starts the backend; connections are answered `waitMs` after they were accepted at the latest. */
export async function startSlowAccept(waitMs: number): Promise<SlowAccept> {
  const { port, child, fillers } = await fullBacklog(SERVER, [String(waitMs / 1000)]);
  return {
    port,
    address: `127.0.0.1:${port}`,
    open() {
      for (const s of fillers) s.destroy();
      child.stdin.write('go\n');
    },
    async close() {
      for (const s of fillers) s.destroy();
      child.kill('SIGKILL');
    },
  };
}
