/**
 * src/process/parent-watch.ts: which wrapper a router follows and how it tells the wrapper is
 * gone (a /proc entry missing, a zombie, a reused pid), and a real IPC parent letting go.
 * The npm and npx cases run end to end in test/integration/stop-wrappers.test.ts.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { type ChainProcess, endsAtNpm, parentMode, stillRuns, wrapperChain } from '../../src/process/parent-watch.ts';

type Stat = { comm: string; state: string; ppid: number; start: string };

/** A fake /proc: pid → its stat line's fields. */
function procs(table: Record<number, Stat>): (pid: number) => Stat | undefined {
  return (pid) => table[pid];
}

describe('wrapperChain', () => {
  it.each([
    [
      'npx: sh -c under npm',
      { 10: { comm: 'sh', state: 'S', ppid: 9, start: '5' }, 9: { comm: 'npm exec', state: 'S', ppid: 1, start: '4' } },
      [10, 9],
    ],
    [
      'a shell under a shell under npm',
      {
        10: { comm: 'bash', state: 'S', ppid: 9, start: '5' },
        9: { comm: 'sh', state: 'S', ppid: 8, start: '4' },
        8: { comm: 'npm start', state: 'S', ppid: 2, start: '3' },
      },
      [10, 9, 8],
    ],
    ['npm start that execs: npm is the parent', { 10: { comm: 'npm start', state: 'S', ppid: 2, start: '5' } }, [10]],
    ['a shell whose parent is init: the shell only', { 10: { comm: 'sh', state: 'S', ppid: 1, start: '5' } }, [10]],
  ] as const)('%s', (_name, table, pids) => {
    expect(wrapperChain(10, procs(table)).map((p) => p.pid)).toEqual(pids);
  });
});

describe('endsAtNpm', () => {
  it.each([
    [
      'npx: sh -c under npm exec',
      {
        10: { comm: 'sh', state: 'S', ppid: 9, start: '5' },
        9: { comm: 'npm exec node /', state: 'S', ppid: 1, start: '4' },
      },
      true,
    ],
    ['npm start that execs', { 10: { comm: 'npm start', state: 'S', ppid: 2, start: '5' } }, true],
    // `npm test` ran a test runner that started the router: the variable is inherited, npm is not the wrapper.
    [
      'a Node process under npm test',
      {
        10: { comm: 'node', state: 'S', ppid: 9, start: '5' },
        9: { comm: 'npm test', state: 'S', ppid: 1, start: '4' },
      },
      false,
    ],
    ['a shell whose parent is init', { 10: { comm: 'sh', state: 'S', ppid: 1, start: '5' } }, false],
  ] as const)('%s', (_name, table, npm) => {
    const stat = procs(table);
    expect(endsAtNpm(wrapperChain(10, stat), stat)).toBe(npm);
  });
});

describe('stillRuns', () => {
  const p: ChainProcess = { pid: 9, start: '4' };
  it.each([
    ['running, the same start time', { 9: { comm: 'npm', state: 'S', ppid: 1, start: '4' } }, true],
    ['gone from /proc', {}, false],
    ['a zombie not reaped yet', { 9: { comm: 'npm', state: 'Z', ppid: 1, start: '4' } }, false],
    ['its pid reused by a later process', { 9: { comm: 'npm', state: 'S', ppid: 1, start: '77' } }, false],
  ] as const)('%s', (_name, table, runs) => {
    expect(stillRuns(p, procs(table))).toBe(runs);
  });
});

describe('parentMode', () => {
  it('an IPC channel first, then npm (npm_lifecycle_event), else nothing followed', () => {
    expect(parentMode({ npm_lifecycle_event: 'npx' }, true)).toBe('ipc');
    expect(parentMode({ npm_lifecycle_event: 'npx' }, false)).toBe('npm');
    expect(parentMode({ npm_lifecycle_event: 'start' }, false)).toBe('npm');
    expect(parentMode({}, false)).toBe('none');
  });

  it('a real IPC parent that lets go: the child is told once', async () => {
    const url = new URL('../../src/process/parent-watch.ts', import.meta.url).href;
    const code = `import { followParent } from ${JSON.stringify(url)};
      followParent((reason) => { process.stdout.write(reason); process.exit(7); });
      setInterval(() => {}, 1000);
      process.send('ready');`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    });
    let out = '';
    child.stdout?.on('data', (c) => (out += c));
    const exited = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    await new Promise((r) => child.once('message', r));
    child.disconnect();
    expect(await exited).toBe(7);
    expect(out).toBe('parent channel closed');
  }, 20_000);
});
