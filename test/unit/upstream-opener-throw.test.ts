/**
 * An opener that throws instead of calling back (a bug in it) is reported through the findJack
 * loop's `done`, once, on the first attempt and on a retry alike: a retry's opener runs inside the
 * failed connect's callback, where the throw would otherwise reach the process.
 */
import { describe, expect, it } from 'vitest';
import type { Backend, Candidates, Jack, Request } from '../../src/contracts/types.ts';
import { ConnectError } from '../../src/upstream/connect.ts';
import { type OpenThen, tryJacksThen } from '../../src/upstream/index.ts';

const jack: Jack = { backend: { id: '127.0.0.1:1', host: '127.0.0.1', port: 1 } as Backend, subcluster: 'a' };
const operator = { findJack: () => jack };
const candidates = { policy: { retries: 2, crossRetries: 0 } } as unknown as Candidates;

/** Runs the loop with `open`; resolves with every call of `done` once the loop has settled. */
async function run(open: OpenThen<string>): Promise<unknown[]> {
  const calls: unknown[] = [];
  const uncaught: unknown[] = [];
  const onUncaught = (e: unknown) => uncaught.push(e);
  process.on('uncaughtException', onUncaught);
  try {
    tryJacksThen<string>({} as Request, candidates, operator as never, open, (err, outcome) =>
      calls.push(err ?? outcome),
    );
    await new Promise((r) => setTimeout(r, 50));
  } finally {
    process.off('uncaughtException', onUncaught);
  }
  expect(uncaught).toEqual([]);
  return calls;
}

describe('findJack loop: an opener that throws', () => {
  it('on the first attempt: done gets the error, nothing is thrown to the caller', async () => {
    const calls = await run(() => {
      throw new TypeError('opener bug');
    });
    expect(calls).toHaveLength(1);
    expect(calls[0]).toBeInstanceOf(TypeError);
  });

  it('on a retry, inside the failed connect callback: done gets the error once', async () => {
    let n = 0;
    const calls = await run((_jack, _attempt, done) => {
      if (n++ === 0) setImmediate(() => done(new ConnectError('refused', false), undefined));
      else throw new TypeError('opener bug on retry');
    });
    expect(n).toBe(2);
    expect(calls).toHaveLength(1);
    expect((calls[0] as Error).message).toBe('opener bug on retry');
  });

  it('an opener that throws and calls back later: done still runs once', async () => {
    const calls = await run((_jack, _attempt, done) => {
      setImmediate(() => done(undefined, 'late socket'));
      throw new TypeError('opener bug');
    });
    expect(calls).toHaveLength(1);
    expect(calls[0]).toBeInstanceOf(TypeError);
  });
});
