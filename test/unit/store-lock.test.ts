import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  lockStore,
  openLockedStore,
  pidAlive,
  processStartTime,
  STORE_LOCK_FILE,
  StoreLockedError,
} from '../../src-router/store';
import { eventually, tempDir } from '../support/node-harness';

// Issue #9: one process per store folder. `<store_dir>/router.lock` holds the PID of the process using the store;
// a second opener is refused with the folder and that PID, a lock left by a dead process is taken over.

const children: ChildProcess[] = [];
afterAll(() => children.forEach((c) => c.kill('SIGKILL')));

/** A process that stays alive (standing in for another node) until the test ends. */
async function liveProcess(): Promise<number> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  children.push(child);
  await new Promise((r) => child.once('spawn', r));
  return child.pid!;
}

/** The PID of a process that has exited (and been reaped): surely dead. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((r) => child.once('exit', r));
  expect(pidAlive(child.pid!)).toBe(false);
  return child.pid!;
}

const lockFile = (dir: string) => join(realpathSync(dir), STORE_LOCK_FILE);
/** The PID on the lock file's first line. */
const holder = (dir: string) => readFileSync(lockFile(dir), 'utf8').split('\n')[0];

function refusal(fn: () => unknown): StoreLockedError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(StoreLockedError);
    return err as StoreLockedError;
  }
  throw new Error('expected StoreLockedError');
}

describe('store lock (issue #9)', () => {
  it('creates router.lock with this PID, refuses a second open, and removes it on release', () => {
    const dir = tempDir();
    const lock = lockStore(dir);
    expect(lock.file).toBe(lockFile(dir));
    expect(holder(dir)).toBe(String(process.pid));
    const err = refusal(() => lockStore(dir));
    expect(err.message).toMatch(
      new RegExp(`store ${realpathSync(dir)} is already open in this process \\(PID ${process.pid}`),
    );
    lock.release();
    expect(existsSync(lockFile(dir))).toBe(false);
    lock.release(); // idempotent
    lockStore(dir).release();
  });

  it('refuses a store another live process holds, naming the store folder and that PID', async () => {
    const dir = tempDir();
    const pid = await liveProcess();
    writeFileSync(join(dir, STORE_LOCK_FILE), `${pid}\n`);
    const err = refusal(() => lockStore(dir));
    expect(err).toMatchObject({ code: 'store_locked', pid, storeDir: realpathSync(dir), lockFile: lockFile(dir) });
    expect(err.message).toBe(
      `store ${realpathSync(dir)} is in use by another routerdesk process (PID ${pid}, lock file ${lockFile(dir)}): stop that node first, or give this one its own cluster.store_dir`,
    );
    expect(holder(dir)).toBe(String(pid)); // untouched
    // openLockedStore refuses before opening the database.
    expect(() => openLockedStore(dir)).toThrow(StoreLockedError);
    expect(existsSync(join(dir, 'router.db'))).toBe(false);
  });

  it('takes over a stale lock: a dead PID, a torn or garbage file, this PID left by an earlier process', async () => {
    const dir = tempDir();
    for (const content of [`${await deadPid()}\n`, '', 'not a pid', `${process.pid}\n`]) {
      writeFileSync(join(dir, STORE_LOCK_FILE), content);
      const lock = lockStore(dir);
      expect(holder(dir), JSON.stringify(content)).toBe(String(process.pid));
      lock.release();
      expect(existsSync(lockFile(dir))).toBe(false);
    }
  });

  it('records the holder’s start time, so a live process that merely reuses the PID does not hold the store', async () => {
    const dir = tempDir();
    const lock = lockStore(dir);
    const [, started] = readFileSync(lock.file, 'utf8').split('\n');
    expect(started).toBe(processStartTime(process.pid) ?? '');
    lock.release();
    const pid = await liveProcess();
    const real = processStartTime(pid);
    // With the right start time the live process holds it; with another one (an older process that had this PID) it does not.
    writeFileSync(join(dir, STORE_LOCK_FILE), `${pid}\n${real ?? ''}\n`);
    expect(refusal(() => lockStore(dir)).pid).toBe(pid);
    if (real !== null) {
      writeFileSync(join(dir, STORE_LOCK_FILE), `${pid}\n${Number(real) - 1}\n`);
      lockStore(dir).release();
    }
  });

  it.runIf(process.platform === 'linux')(
    'takes over a lock whose process has exited but is not yet reaped (a zombie)',
    async () => {
      // The child outlives the shell's own part (`sleep 0` could exit and be reaped by `sh` before the `exec` on a busy
      // machine); its parent, exec'd into `sleep 30`, never reaps it: a zombie for as long as we need.
      const parent = spawn('sh', ['-c', 'sleep 1 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
      children.push(parent);
      const zombie = Number(await new Promise<string>((r) => parent.stdout!.once('data', (d) => r(String(d).trim()))));
      await eventually(() => readFileSync(`/proc/${zombie}/stat`, 'utf8').split(') ')[1]?.startsWith('Z'), {
        what: 'a zombie',
      });
      expect(pidAlive(zombie)).toBe(true); // signal 0 still reaches a zombie: the lock must look deeper
      const dir = tempDir();
      writeFileSync(join(dir, STORE_LOCK_FILE), `${zombie}\n${processStartTime(zombie)}\n`);
      lockStore(dir).release();
    },
  );

  it('takes over a stale lock even when an earlier takeover died half-way (stale guard file)', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, STORE_LOCK_FILE), `${await deadPid()}\n`);
    writeFileSync(join(dir, `${STORE_LOCK_FILE}.takeover`), `${await deadPid()}\n`);
    const lock = lockStore(dir);
    expect(holder(dir)).toBe(String(process.pid));
    expect(existsSync(join(dir, `${STORE_LOCK_FILE}.takeover`))).toBe(false);
    lock.release();
  });

  it('release never removes a lock that is no longer its own', async () => {
    const dir = tempDir();
    const lock = lockStore(dir);
    const other = await liveProcess();
    writeFileSync(lock.file, `${other}\n`); // replaced behind its back
    lock.release();
    expect(holder(dir)).toBe(String(other));
  });

  it('openLockedStore: the db and its lock; after close and release the store opens again', () => {
    const dir = tempDir();
    const { db, lock } = openLockedStore(dir);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(() => openLockedStore(dir)).toThrow(/already open in this process/);
    db.close();
    lock.release();
    const again = openLockedStore(dir);
    again.db.close();
    again.lock.release();
    expect(existsSync(lockFile(dir))).toBe(false);
  });
});
