import { describe, expect, it } from 'vitest';
import {
  type EngineRecord,
  judgeRecord,
  type ProcInfo,
  parseCmdline,
  parseRecordFile,
} from '../../src-router/backends/engine-records';
import { parseProcStat } from '../../src-router/proc-stat';

// Issue #9: the PID records of engines, and the rule that decides which leftover of a previous run is stopped.
// A PID that now belongs to an unrelated process, or an engine whose node still runs, is never touched.
describe('engine PID records (issue #9)', () => {
  const self = { pid: 500, startTime: '9000' };
  const rec: EngineRecord = {
    pid: 1234,
    pgid: 1234,
    cmdline: ['llama-server', '--port', '4000'],
    startTime: '7777',
    localId: 'm',
    startedAt: '2024-01-01T00:00:00.000Z',
    owner: { pid: 400, startTime: '100' },
  };
  const same: ProcInfo = { cmdline: ['llama-server', '--port', '4000'], startTime: '7777', pgid: 1234 };

  it('stops a leftover whose node is gone', () => {
    expect(judgeRecord(rec, same, null, self)).toBe('stop');
  });

  it('stops a leftover whose node PID now belongs to another process (other start time)', () => {
    expect(judgeRecord(rec, same, { cmdline: ['bash'], startTime: '555', pgid: 400 }, self)).toBe('stop');
  });

  it('leaves alone the engine of a node that still runs', () => {
    expect(judgeRecord(rec, same, { cmdline: ['node', 'cli.js', 'node'], startTime: '100', pgid: 400 }, self)).toBe(
      'owned',
    );
  });

  it('a record of this very process is its own: stopped (a previous supervisor here left it)', () => {
    expect(
      judgeRecord({ ...rec, owner: self }, same, { cmdline: ['node'], startTime: self.startTime, pgid: 500 }, self),
    ).toBe('stop');
  });

  it('nothing under the PID: gone', () => {
    expect(judgeRecord(rec, null, null, self)).toBe('gone');
  });

  it('a PID reused by an unrelated process: another command line, or the same one started at another time', () => {
    expect(judgeRecord(rec, { ...same, cmdline: ['sleep', '600'] }, null, self)).toBe('reused');
    expect(judgeRecord(rec, { ...same, cmdline: ['llama-server', '--port', '4000', '-v'] }, null, self)).toBe('reused');
    expect(judgeRecord(rec, { ...same, startTime: '8888' }, null, self)).toBe('reused');
  });

  it('an empty recorded command line never matches', () => {
    expect(judgeRecord({ ...rec, cmdline: [] }, { ...same, cmdline: [] }, null, self)).toBe('reused');
  });

  it('without start times (where none were read), the command line decides', () => {
    expect(judgeRecord({ ...rec, startTime: null }, { ...same, startTime: '1' }, null, self)).toBe('stop');
    expect(judgeRecord({ ...rec, startTime: null }, { ...same, cmdline: ['x'] }, null, self)).toBe('reused');
  });

  it('parses /proc/<pid>/stat, command names with spaces and parentheses included', () => {
    const fields = Array.from({ length: 50 }, (_, i) => String(i + 3));
    fields[0] = 'S';
    fields[2] = '4321'; // pgrp, field 5
    fields[19] = '123456789'; // starttime, field 22
    fields[11] = '250'; // utime, field 14
    fields[12] = '40'; // stime, field 15
    expect(parseProcStat(`77 (my (odd) name) ${fields.join(' ')}\n`)).toEqual({
      state: 'S',
      pgid: 4321,
      startTime: '123456789',
      utime: 250,
      stime: 40,
    });
    expect(parseProcStat('garbage')).toBeNull();
    expect(parseProcStat('1 (x) S 0')).toBeNull();
  });

  it('parses /proc/<pid>/cmdline', () => {
    expect(parseCmdline('sh\0-c\0echo a b\0')).toEqual(['sh', '-c', 'echo a b']);
    expect(parseCmdline('')).toEqual([]);
  });

  it('reads the record file, dropping what is not a record', () => {
    const file = JSON.stringify({
      version: 1,
      engines: [
        rec,
        { pid: 'x' },
        { ...rec, pid: 1 },
        { ...rec, cmdline: [1] },
        { ...rec, pgid: null, startTime: null },
      ],
    });
    expect(parseRecordFile(file)).toEqual([rec, { ...rec, pgid: null, startTime: null }]);
    expect(parseRecordFile('{not json')).toEqual([]);
    expect(parseRecordFile('{"engines": 3}')).toEqual([]);
    expect(parseRecordFile('null')).toEqual([]);
  });
});
