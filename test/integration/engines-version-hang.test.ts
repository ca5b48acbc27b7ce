import { spawn } from 'node:child_process';
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, tempDir } from '../support/node-harness';

// A binary on PATH whose `--version` never finishes, and leaves a child of its own holding the output pipes (a shell
// script, a Python launcher): `engines list` still finishes, reporting the engine, after the bounded probe.

/** A process that exists and is not a zombie. */
function running(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0] !== 'Z';
  } catch {
    return false;
  }
}

describe('routerdesk engines list with a binary that hangs on --version', () => {
  const dir = tempDir('routerdesk-hang-');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('finishes and lists the binary; the hanging probe and its children are gone', async () => {
    const script = join(dir, 'llama-server');
    const marker = join(dir, 'child.pid');
    writeFileSync(script, `#!/bin/sh\nsleep 300 &\necho $! > ${marker}\nwait\n`);
    chmodSync(script, 0o755);
    const child = spawn(process.execPath, [CLI, 'engines', 'list', '--json'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PATH: `${dir}:${process.env.PATH}` },
    });
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(0);
    const listed = JSON.parse(stdout) as { engines: { family: string; path: string | null; available: boolean }[] };
    expect(listed.engines.find((e) => e.family === 'llama-server')).toMatchObject({ path: script, available: true });
    // The probe's own child was killed with it: wait until it is gone (or a zombie waiting to be reaped).
    const pid = Number(readFileSync(marker, 'utf8').trim());
    while (running(pid)) await new Promise((r) => setTimeout(r, 100));
  });
});
