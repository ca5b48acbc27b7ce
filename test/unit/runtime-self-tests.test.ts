import { chmodSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EmbeddedKeySpace } from '../../src-router/kv';
import {
  engineBinaryCheck,
  freeSpaceCheck,
  keyspaceReachableCheck,
  oneLine,
  portBoundCheck,
  runSelfTests,
  type SelfTestCheck,
  storeWritableCheck,
} from '../../src-router/runtime';
import { tempDir } from '../support/node-harness';

const check = (name: string, run: SelfTestCheck['run']): SelfTestCheck => ({ name, run });

describe('self-test runner', () => {
  it('runs checks in order, one at a time, timing each with the injected clock', async () => {
    let t = 0;
    const order: string[] = [];
    const step = (name: string, took: number, status: 'pass' | 'warn' | 'fail') =>
      check(name, async () => {
        order.push(`start ${name}`);
        t += took;
        order.push(`end ${name}`);
        return { status, detail: `${name} done` };
      });
    const results = await runSelfTests([step('a', 5, 'pass'), step('b', 12.34, 'warn'), step('c', 0, 'fail')], {
      now: () => t,
    });
    expect(order).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    expect(results).toEqual([
      { name: 'a', detail: 'a done', ms: 5, status: 'pass' },
      { name: 'b', detail: 'b done', ms: 12.3, status: 'warn' },
      { name: 'c', detail: 'c done', ms: 0, status: 'fail' },
    ]);
  });

  it('a throwing or rejecting check fails with its message; the rest still run', async () => {
    const results = await runSelfTests([
      check('throws', () => {
        throw new Error('disk\nexploded');
      }),
      check('rejects', () => Promise.reject(new TypeError('bad input'))),
      check('odd', () => Promise.reject('plain string')),
      check('after', async () => ({ status: 'pass', detail: 'fine' })),
    ]);
    expect(results.map((r) => [r.name, r.status, r.detail])).toEqual([
      ['throws', 'fail', 'disk exploded'],
      ['rejects', 'fail', 'bad input'],
      ['odd', 'fail', 'plain string'],
      ['after', 'pass', 'fine'],
    ]);
    for (const r of results) expect(typeof r.ms).toBe('number');
  });

  it('a hanging check fails as timed out; an unknown status is a fail', async () => {
    const results = await runSelfTests(
      [
        check('hangs', () => new Promise(() => {})),
        check('weird', async () => ({ status: 'ok' as 'pass', detail: '' })),
      ],
      { timeoutMs: 30 },
    );
    expect(results[0]).toMatchObject({ name: 'hangs', status: 'fail', detail: 'timed out after 30 ms' });
    expect(results[0].ms).toBeGreaterThanOrEqual(25);
    expect(results[1]).toMatchObject({ status: 'fail', detail: 'check returned an unknown status: ok' });
  });

  it('details are one line and bounded', () => {
    expect(oneLine('  a\n\tb  ')).toBe('a b');
    expect(oneLine('x'.repeat(1000)).length).toBe(240);
  });
});

describe('self-test checks', () => {
  it('store writable: passes in a writable dir and leaves nothing behind; fails where it cannot write', async () => {
    const dir = join(tempDir(), 'store');
    const [ok] = await runSelfTests([storeWritableCheck(dir)]);
    expect(ok).toMatchObject({ name: 'store writable', status: 'pass', detail: `${dir} writable` });
    expect(readdirSync(dir)).toEqual([]);
    const file = join(tempDir(), 'a-file');
    writeFileSync(file, '');
    const [bad] = await runSelfTests([storeWritableCheck(join(file, 'sub'))]);
    expect(bad.status).toBe('fail');
    expect(bad.detail).toMatch(/ENOTDIR|EEXIST/);
  });

  it('free space: pass above the threshold, warn below, fail below the fail threshold, fail on a missing dir', async () => {
    const dir = tempDir();
    const results = await runSelfTests([
      freeSpaceCheck(dir, { warnBelowBytes: 1 }),
      freeSpaceCheck(dir, { warnBelowBytes: Number.MAX_SAFE_INTEGER, name: 'huge' }),
      freeSpaceCheck(dir, { failBelowBytes: Number.MAX_SAFE_INTEGER }),
      freeSpaceCheck(join(dir, 'nope')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['pass', 'warn', 'fail', 'fail']);
    expect(results[0].detail).toMatch(new RegExp(`free of .* in ${dir}$`));
    expect(results[1].name).toBe('huge');
    expect(results[3].detail).toMatch(/ENOENT/);
  });

  it('engine binary: absolute path, PATH lookup, missing, and not executable', async () => {
    const bin = tempDir();
    const exe = join(bin, 'my-engine');
    writeFileSync(exe, '#!/bin/sh\n');
    chmodSync(exe, 0o755);
    const plain = join(bin, 'not-exec');
    writeFileSync(plain, '');
    mkdirSync(join(bin, 'empty'));
    const results = await runSelfTests([
      engineBinaryCheck(exe),
      engineBinaryCheck('my-engine', { pathEnv: `${join(bin, 'empty')}:${bin}` }),
      engineBinaryCheck('my-engine', { pathEnv: join(bin, 'empty'), name: 'engine text' }),
      engineBinaryCheck(plain),
    ]);
    expect(results.map((r) => [r.status, r.detail])).toEqual([
      ['pass', exe],
      ['pass', exe],
      ['fail', 'my-engine: not found on PATH'],
      ['fail', `${plain}: not found or not executable`],
    ]);
    expect(results[2].name).toBe('engine text');
  });

  it('keyspace reachable: pass when it answers, fail with the error when it does not', async () => {
    const ks = new EmbeddedKeySpace();
    const [up] = await runSelfTests([keyspaceReachableCheck(ks)]);
    expect(up).toMatchObject({ status: 'pass', detail: 'embedded keyspace answered' });
    await ks.close();
    const [down] = await runSelfTests([keyspaceReachableCheck(ks, { label: 'redis://h:6379' })]);
    expect(down).toMatchObject({ status: 'fail', detail: 'redis://h:6379: embedded keyspace is closed' });
  });

  it('port bound: pass while something listens, fail once it stops', async () => {
    const server: Server = createServer((s) => s.destroy());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const [up] = await runSelfTests([portBoundCheck('0.0.0.0', port)]);
    expect(up).toMatchObject({
      name: `port ${port} bound`,
      status: 'pass',
      detail: `127.0.0.1:${port} accepting connections`,
    });
    await new Promise((r) => server.close(r));
    const [down] = await runSelfTests([portBoundCheck('127.0.0.1', port, { name: 'http listener' })]);
    expect(down).toMatchObject({ name: 'http listener', status: 'fail', detail: `127.0.0.1:${port} ECONNREFUSED` });
  });
});
