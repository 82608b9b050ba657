/** The bench's TIME_WAIT count (bench/lib/sockstat.ts): read from sockstat's TCP line, never thrown. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { timeWaitSockets } from '../../bench/lib/sockstat.ts';

describe('timeWaitSockets', () => {
  it('reads tw from the TCP line, and is undefined for a missing or foreign file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'swb-sockstat-'));
    const file = join(dir, 'sockstat');
    writeFileSync(file, 'sockets: used 12\nTCP: inuse 3 orphan 0 tw 28207 alloc 3 mem 0\nUDP: inuse 0 mem 0\n');
    expect(timeWaitSockets(file)).toBe(28207);
    writeFileSync(file, 'UDP: inuse 0 mem 0\n');
    expect(timeWaitSockets(file)).toBeUndefined();
    expect(timeWaitSockets(join(dir, 'absent'))).toBeUndefined();
  });

  it.runIf(process.platform === 'linux')('reads this host', () => {
    expect(timeWaitSockets()).toBeGreaterThanOrEqual(0);
  });
});
