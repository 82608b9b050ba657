/**
 * Shared deadlines (src/base/deadline.ts): each fires once, not before it is due (1 ms of the loop's
 * clock aside) and in due order; a disarmed one never fires; re-arming inside a fire works; a
 * throwing fire does not stop the others. Real timers, bounds generous: ordering and counts
 * decide, never how late a timer ran.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { arm, armedDeadlines, Deadline, disarm } from '../../src/base/deadline.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

afterEach(() => {
  expect(armedDeadlines()).toBe(0);
});

describe('shared deadlines', () => {
  it('fires each armed deadline once, in due order, and not before it is due', async () => {
    const fired: { name: string; late: number }[] = [];
    const start = performance.now();
    const at = (name: string, ms: number) => {
      const d = new Deadline((n: string) => fired.push({ name: n, late: performance.now() - start - ms }), name);
      arm(d, ms);
      return d;
    };
    at('b', 60);
    at('a', 20);
    at('c', 60);
    at('d', 100);
    expect(armedDeadlines()).toBe(4);
    await sleep(200);
    expect(fired.map((f) => f.name)).toEqual(['a', 'b', 'c', 'd']);
    for (const f of fired) expect(f.late).toBeGreaterThanOrEqual(-1);
  });

  it('a disarmed deadline never fires, the head included; the others still do', async () => {
    const fired: string[] = [];
    const first = new Deadline((n: string) => fired.push(n), 'first');
    const second = new Deadline((n: string) => fired.push(n), 'second');
    const third = new Deadline((n: string) => fired.push(n), 'third');
    arm(first, 30);
    arm(second, 30);
    arm(third, 30);
    disarm(first);
    disarm(third);
    disarm(third); // twice: nothing
    await sleep(100);
    expect(fired).toEqual(['second']);
  });

  it('re-arming moves a deadline to its new due time', async () => {
    const fired: number[] = [];
    const d = new Deadline(() => fired.push(performance.now()), undefined);
    const start = performance.now();
    arm(d, 20);
    arm(d, 80);
    await sleep(200);
    expect(fired.length).toBe(1);
    expect(fired[0]! - start).toBeGreaterThanOrEqual(79);
  });

  it('a deadline may re-arm itself when it fires (a periodic tick), on the same queue', async () => {
    let ticks = 0;
    const d: Deadline<undefined> = new Deadline(() => {
      if (++ticks < 5) arm(d, 10);
    }, undefined);
    arm(d, 10);
    for (let i = 0; i < 100 && ticks < 5; i++) await sleep(50);
    await sleep(50);
    expect(ticks).toBe(5);
  });

  it("a deadline armed on an emptied queue fires at its own time, not at the old head's", async () => {
    const fired: { name: string; at: number }[] = [];
    const early = new Deadline((n: string) => fired.push({ name: n, at: performance.now() }), 'early');
    arm(early, 40);
    disarm(early);
    await sleep(10);
    const late = new Deadline((n: string) => fired.push({ name: n, at: performance.now() }), 'late');
    const armedAt = performance.now();
    arm(late, 40);
    await sleep(150);
    expect(fired.map((f) => f.name)).toEqual(['late']);
    expect(fired[0]!.at - armedAt).toBeGreaterThanOrEqual(39);
  });

  it('a throwing fire is reported once the others have run', async () => {
    const fired: string[] = [];
    const errors: unknown[] = [];
    const listeners = process.listeners('uncaughtException');
    process.removeAllListeners('uncaughtException');
    process.on('uncaughtException', (err) => errors.push(err));
    try {
      arm(
        new Deadline(() => {
          throw new Error('boom');
        }, undefined),
        15,
      );
      arm(new Deadline((n: string) => fired.push(n), 'after'), 15);
      await sleep(60);
    } finally {
      process.removeAllListeners('uncaughtException');
      for (const l of listeners) process.on('uncaughtException', l);
    }
    expect(fired).toEqual(['after']);
    expect(errors.map((e) => (e as Error).message)).toEqual(['boom']);
  });
});
