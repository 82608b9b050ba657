/**
 * Admission (src/listener/): the local and the shared implementation answer the same table of
 * cap cases; the shared one also counts once across views (threads) and gives back a dead
 * worker's share.
 */
import { describe, expect, it } from 'vitest';
import { type Admission, LocalAdmission, REFUSED } from '../../src/admission/admission.ts';
import { SharedAdmission } from '../../src/admission/shared-admission.ts';
import { limitsSchema } from '../../src/config/schema.ts';

const limits = (o: Record<string, unknown>) => limitsSchema.parse(o);

const IMPLEMENTATIONS: [string, () => Admission][] = [
  ['local', () => new LocalAdmission()],
  ['shared', () => SharedAdmission.view(SharedAdmission.create(2).state, 0)],
];

describe.each(IMPLEMENTATIONS)('%s admission', (_name, make) => {
  it('limits.maxConnections counts every listener together', () => {
    const a = make();
    const l = limits({ maxConnections: 2 });
    const x = a.listener('x');
    const y = a.listener('y');
    const h1 = a.admit(x, '10.0.0.1', l, undefined);
    expect(h1).not.toBe(REFUSED);
    expect(a.admit(y, '10.0.0.2', l, undefined)).not.toBe(REFUSED);
    expect(a.admit(y, '10.0.0.3', l, undefined)).toBe(REFUSED);
    a.release(x, '10.0.0.1', h1);
    expect(a.admit(y, '10.0.0.3', l, undefined)).not.toBe(REFUSED);
    expect(a.open).toBe(2);
  });

  it('a listener cap counts that listener only, and a refusal takes nothing', () => {
    const a = make();
    const l = limits({});
    const x = a.listener('x');
    expect(a.listener('x')).toBe(x);
    const y = a.listener('y');
    expect(a.admit(x, '10.0.0.1', l, 1)).not.toBe(REFUSED);
    expect(a.admit(x, '10.0.0.1', l, 1)).toBe(REFUSED);
    expect(a.admit(y, '10.0.0.1', l, 1)).not.toBe(REFUSED);
    expect(a.open).toBe(2);
  });

  it('maxConnectionsPerClient counts each address on its own; release gives the place back', () => {
    const a = make();
    const l = limits({ maxConnectionsPerClient: 2 });
    const x = a.listener('x');
    const handles: number[] = [];
    for (let i = 0; i < 2; i++) handles.push(a.admit(x, '192.0.2.1', l, undefined));
    expect(handles).not.toContain(REFUSED);
    expect(a.admit(x, '192.0.2.1', l, undefined)).toBe(REFUSED);
    for (let i = 2; i < 200; i++) expect(a.admit(x, `192.0.2.${i}`, l, undefined)).not.toBe(REFUSED);
    a.release(x, '192.0.2.1', handles[0]!);
    expect(a.admit(x, '192.0.2.1', l, undefined)).not.toBe(REFUSED);
    expect(a.open).toBe(200);
  });
});

describe('shared admission across threads', () => {
  it('two views share one count; a dead worker’s share is given back', () => {
    const owner = SharedAdmission.create(2);
    const t0 = SharedAdmission.view(owner.state, 0);
    const t1 = SharedAdmission.view(owner.state, 1);
    const l = limits({ maxConnections: 8, maxConnectionsPerClient: 6 });
    const s0 = t0.listener('web');
    const s1 = t1.listener('web');
    expect(s1).toBe(s0);
    let admitted = 0;
    for (let i = 0; i < 8; i++) {
      if (t0.admit(s0, '198.51.100.1', l, 5) !== REFUSED) admitted++;
      if (t1.admit(s1, '198.51.100.1', l, 5) !== REFUSED) admitted++;
    }
    expect(admitted).toBe(5);
    expect(owner.open).toBe(5);
    owner.forgetWorker(0);
    owner.forgetWorker(1);
    expect(owner.open).toBe(0);
    expect(t1.admit(s1, '198.51.100.1', l, 5)).not.toBe(REFUSED);
  });
});
