import { describe, expect, it } from 'vitest';
import { SerialReads } from '../../src-router/lending/serial-reads';

/** A read whose answers the test hands out one by one. */
function controlled() {
  const pending: { key: string; resolve: (v: string) => void; reject: (e: Error) => void }[] = [];
  let n = 0;
  const reads = new SerialReads<string>(
    (key) => new Promise((resolve, reject) => pending.push({ key, resolve: (v) => resolve(`${v}#${++n}`), reject })),
  );
  return { reads, pending };
}
const tick = () => new Promise((r) => setImmediate(r));

describe('SerialReads (issue #26 item 4: the lease reads a slave makes on pushes)', () => {
  it('one read at a time per key; asks meanwhile share the next read, which starts after the running one ends', async () => {
    const { reads, pending } = controlled();
    const first = reads.get('a');
    const later = [reads.get('a'), reads.get('a'), reads.get('a')];
    expect(pending.map((p) => p.key)).toEqual(['a']);
    pending[0].resolve('x');
    expect(await first).toBe('x#1');
    await tick();
    expect(pending.length).toBe(2);
    pending[1].resolve('y');
    expect(await Promise.all(later)).toEqual(['y#2', 'y#2', 'y#2']);
  });

  it('keys are independent, and a failed read neither blocks the next nor answers the asks that wait', async () => {
    const { reads, pending } = controlled();
    const a = reads.get('a');
    const b = reads.get('b');
    expect(pending.map((p) => p.key)).toEqual(['a', 'b']);
    const waiting = reads.get('a');
    pending[0].reject(new Error('master down'));
    await expect(a).rejects.toThrow('master down');
    await tick();
    pending[2].resolve('z');
    expect(await waiting).toBe('z#1');
    pending[1].resolve('w');
    expect(await b).toBe('w#2');
  });
});
