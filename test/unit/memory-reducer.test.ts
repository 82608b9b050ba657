/**
 * When `bin/switchboard.js` re-executes itself without V8's memory reducer (src/process/memory-reducer.ts):
 * `start` only, once, and never over node flags of the user's own or under the inspector.
 * test/integration/start-memory-reducer.test.ts checks the real CLI.
 */
import { describe, expect, it } from 'vitest';
import { commandOf, NO_MEMORY_REDUCER, reexecArgs } from '../../src/process/memory-reducer.ts';

describe('commandOf', () => {
  it('finds the command word after the global options', () => {
    expect(commandOf(['start', '--config', 'x.yaml'])).toBe('start');
    expect(commandOf(['--verbose', 'start'])).toBe('start');
    expect(commandOf(['check', 'start'])).toBe('check');
  });

  it('has none for a flag of its own or nothing', () => {
    expect(commandOf(['--version'])).toBeUndefined();
    expect(commandOf(['-h', 'start'])).toBeUndefined();
    expect(commandOf([])).toBeUndefined();
  });
});

describe('reexecArgs', () => {
  it('re-executes start under the flag, before node arguments of its own', () => {
    expect(reexecArgs([], ['start'], undefined)).toEqual([NO_MEMORY_REDUCER]);
    expect(reexecArgs(['--import', 'p.mjs'], ['--verbose', 'start', '-c', 'a.yaml'], undefined)).toEqual([
      NO_MEMORY_REDUCER,
      '--import',
      'p.mjs',
    ]);
  });

  it('leaves every other command as it is', () => {
    for (const args of [['check'], ['route', 'x'], ['help', 'start'], ['--version'], []]) {
      expect(reexecArgs([], args, undefined)).toBeUndefined();
    }
  });

  it('runs once: the re-executed process already has the flag', () => {
    const once = reexecArgs([], ['start'], undefined) ?? [];
    expect(reexecArgs(once, ['start'], undefined)).toBeUndefined();
  });

  it("keeps the user's own reducer flag, in either spelling", () => {
    for (const flag of ['--memory-reducer', '--no-memory-reducer', '--memory_reducer', '--memory-reducer=true']) {
      expect(reexecArgs([flag], ['start'], undefined)).toBeUndefined();
    }
    // A flag that only starts alike is not the reducer's.
    expect(reexecArgs(['--memory-reducer-for-small-heaps'], ['start'], undefined)).toEqual([
      NO_MEMORY_REDUCER,
      '--memory-reducer-for-small-heaps',
    ]);
  });

  it('leaves a process under the inspector: re-executing would end its session', () => {
    for (const flag of ['--inspect', '--inspect=127.0.0.1:0', '--inspect-brk', '--inspect-wait=9229']) {
      expect(reexecArgs([flag], ['start'], undefined)).toBeUndefined();
    }
    expect(reexecArgs(['--inspect-port=9230'], ['start'], undefined)).toEqual([
      NO_MEMORY_REDUCER,
      '--inspect-port=9230',
    ]);
    // The inspector from NODE_OPTIONS alike; other options there do not matter.
    expect(reexecArgs([], ['start'], '--max-old-space-size=512 --inspect-brk=0')).toBeUndefined();
    expect(reexecArgs([], ['start'], '--max-old-space-size=512')).toEqual([NO_MEMORY_REDUCER]);
  });
});
