/**
 * `switchboard start` ends with the processes that started it when they are wrappers: npm, npx,
 * the shell npm runs a script in, or a Node parent over an IPC channel (issue 45 item 4).
 *
 * Why: `npm start` and `npx switchboard start` run the router under `sh -c` (npm 10 and 11,
 * @npmcli/run-script). npm forwards SIGINT and SIGTERM to that shell only, never to its
 * children, and dies of SIGHUP; the shell (dash, bash) dies of SIGTERM and waits through
 * SIGINT without passing either on. So a `kill` of the wrapper left the router serving,
 * reparented to init, its ports held. `package.json`'s start script `exec`s, so npm's own child
 * is the router and the signals npm forwards reach it; npx offers no such place, hence this.
 *
 * 1. An IPC channel (a Node parent's `fork`, `stdio: 'ipc'`): its `disconnect` (the parent
 *    exited or let go) is the event. The channel is unref'd: it does not keep the router alive.
 * 2. Started by npm or npx (npm sets `npm_lifecycle_event` in its scripts' environment, and on
 *    Linux the chain must end at npm itself: its process title, `npm start` or `npm exec …`,
 *    starts with `npm`; every descendant of an npm script inherits the variable, so a router
 *    that a test or a script run by `npm test` started and left running is not one): the
 *    wrapper chain is the parent, and while that is a shell, the shell's parent too (on Linux,
 *    read from /proc with each process's start time, so a reused pid is not mistaken for the
 *    wrapper). Neither npm nor its shell gives its child a pipe or a channel to watch, so the
 *    chain is polled every `intervalMs` (500 ms, an unref'd timer; `process.ppid` and one small
 *    /proc read each): the direct parent is gone when `process.ppid` changes (the kernel
 *    reparents at once), a farther one when its /proc entry is gone, a zombie, or another
 *    process's.
 * 3. Anything else (a shell's `switchboard start &` then `disown`, systemd, a container's PID 1)
 *    is left alone: a router that outlives the shell that started it is what those ask for.
 */
import { readFileSync } from 'node:fs';

/** Shells npm (or a user's script) may run the router through: the chain continues above them. */
const SHELLS = new Set(['sh', 'dash', 'bash', 'zsh', 'ash', 'ksh', 'mksh', 'busybox']);

/** One process of the chain: its pid and its start time (clock ticks since boot; '' off Linux). */
export interface ChainProcess {
  readonly pid: number;
  readonly start: string;
}

/** A process's command name, state, parent and start time from `/proc/<pid>/stat` (Linux), or undefined. */
export function procStat(pid: number): { comm: string; state: string; ppid: number; start: string } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so split after the last ')'.
  const close = text.lastIndexOf(')');
  const comm = text.slice(text.indexOf('(') + 1, close);
  const fields = text.slice(close + 2).split(' ');
  // Fields from `state` (3rd of the line): ppid is the 4th, starttime the 22nd.
  return { comm, state: fields[0] ?? '', ppid: Number(fields[1]), start: fields[19] ?? '' };
}

/** The wrapper chain above this process: the parent, then each parent of a shell, up to the first that is not one. */
export function wrapperChain(ppid = process.ppid, stat = procStat): ChainProcess[] {
  const chain: ChainProcess[] = [];
  let pid = ppid;
  while (pid > 1 && chain.length < 8) {
    const s = stat(pid);
    chain.push({ pid, start: s?.start ?? '' });
    if (s === undefined || !SHELLS.has(s.comm)) break;
    pid = s.ppid;
  }
  return chain;
}

/** Whether `p` still runs: its /proc entry is there, not a zombie, and started when it did. */
export function stillRuns(p: ChainProcess, stat = procStat): boolean {
  const s = stat(p.pid);
  if (s === undefined) return false;
  return s.state !== 'Z' && s.state !== 'X' && (p.start === '' || s.start === p.start);
}

/** Whether the chain ends at npm (or npx: `npm exec`), by its process title (Linux /proc). */
export function endsAtNpm(chain: readonly ChainProcess[], stat = procStat): boolean {
  const top = chain[chain.length - 1];
  return top !== undefined && (stat(top.pid)?.comm.startsWith('npm') ?? false);
}

/** Which parent a process follows (see the file header), from its environment and channel. */
export function parentMode(
  env: NodeJS.ProcessEnv = process.env,
  hasChannel = process.channel !== undefined,
): 'ipc' | 'npm' | 'none' {
  if (hasChannel) return 'ipc';
  return env.npm_lifecycle_event !== undefined && env.npm_lifecycle_event !== '' ? 'npm' : 'none';
}

/**
 * Calls `onGone(reason)` once when the wrapper that started this process ends (see the file
 * header); returns the stop. Nothing is watched when the process was not started by one.
 */
export function followParent(onGone: (reason: string) => void, intervalMs = 500): () => void {
  const mode = parentMode();
  if (mode === 'ipc') {
    const gone = () => onGone('parent channel closed');
    process.once('disconnect', gone);
    process.channel?.unref();
    return () => process.removeListener('disconnect', gone);
  }
  if (mode === 'none') return () => {};
  const parent = process.ppid;
  const chain = process.platform === 'linux' ? wrapperChain(parent) : [];
  if (process.platform === 'linux' && !endsAtNpm(chain)) return () => {};
  const farther = chain.slice(1);
  const timer = setInterval(() => {
    const ended = process.ppid !== parent ? parent : farther.find((p) => !stillRuns(p))?.pid;
    if (ended === undefined) return;
    clearInterval(timer);
    onGone(`wrapper process ${ended} exited`);
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
