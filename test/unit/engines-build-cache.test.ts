import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { takeBuildLock } from '../../src-router/backends/engine-build/build-lock';
import {
  buildFolderName,
  buildKey,
  enginesCacheRoot,
  flagsHash,
  isBuildFolderOf,
} from '../../src-router/backends/engine-build/cache-key';
import { LLAMA_SERVER_FLAGS, recipeFor, WHISPER_SERVER_FLAGS } from '../../src-router/backends/engine-build/recipes';
import { probeVersion, versionSummary } from '../../src-router/backends/engine-build/version-probe';
import { tempDir } from '../support/node-harness';

// The engines cache: where builds go, how they are named (source identity + flags), the lock that makes concurrent
// builds wait, and what a binary's --version output is reduced to.

describe('engines cache naming', () => {
  it('lives under XDG_CACHE_HOME when it is absolute, else ~/.cache', () => {
    expect(enginesCacheRoot({ XDG_CACHE_HOME: '/x/cache' }, '/home/u')).toBe('/x/cache/routerdesk/engines');
    expect(enginesCacheRoot({}, '/home/u')).toBe('/home/u/.cache/routerdesk/engines');
    expect(enginesCacheRoot({ XDG_CACHE_HOME: 'relative' }, '/home/u')).toBe('/home/u/.cache/routerdesk/engines');
  });

  it('keys a build by the commit (12 digits) or package version, and a hash of the flags', () => {
    const sha = '80fb11ac73e66d89eae2c6a91d8a77428fa733ed';
    expect(buildKey(sha, LLAMA_SERVER_FLAGS)).toBe(`80fb11ac73e6-${flagsHash(LLAMA_SERVER_FLAGS)}`);
    expect(buildKey('nodejs-whisper-0.3.1', WHISPER_SERVER_FLAGS)).toMatch(/^nodejs-whisper-0\.3\.1-[0-9a-f]{8}$/);
    expect(buildKey('a/b c', [])).toMatch(/^a_b_c-/);
    expect(() => buildKey('', [])).toThrow();
  });

  it('a different flag, or the same flags in another order, is another build', () => {
    const base = flagsHash(['-DA=ON', '-DB=OFF']);
    expect(flagsHash(['-DA=ON', '-DB=OFF'])).toBe(base);
    expect(flagsHash(['-DA=ON', '-DB=ON'])).not.toBe(base);
    expect(flagsHash(['-DB=OFF', '-DA=ON'])).not.toBe(base);
  });

  it('the llama-server flags are CPU-only, static, without UI, curl or OpenSSL', () => {
    for (const f of [
      '-DBUILD_SHARED_LIBS=OFF',
      '-DLLAMA_BUILD_UI=OFF',
      '-DLLAMA_CURL=OFF',
      '-DLLAMA_OPENSSL=OFF',
      '-DLLAMA_BUILD_TESTS=OFF',
    ])
      expect(LLAMA_SERVER_FLAGS).toContain(f);
    for (const f of [
      '-DBUILD_SHARED_LIBS=OFF',
      '-DWHISPER_SDL2=OFF',
      '-DWHISPER_CURL=OFF',
      '-DWHISPER_BUILD_TESTS=OFF',
      '-DWHISPER_BUILD_SERVER=ON',
    ])
      expect(WHISPER_SERVER_FLAGS).toContain(f);
  });

  it('reads the shipped sources: the bundle’s commit, nodejs-whisper’s version, whisper.cpp’s own version for build.json', () => {
    expect(recipeFor('llama-server').sourceId()).toMatch(/^[0-9a-f]{40}$/);
    expect(recipeFor('whisper-server').sourceId()).toBe('nodejs-whisper-0.3.1');
    // whisper-server has no --version: its build records whisper.cpp's version from its CMakeLists.txt.
    expect(recipeFor('whisper-server').fallbackVersion()).toMatch(
      /^whisper\.cpp \d+\.\d+\.\d+ \(nodejs-whisper 0\.3\.1\)$/,
    );
  });

  it('tells an engine’s build folders from its lock, temp folders and the other engine', () => {
    const name = buildFolderName('whisper-server', 'k-1');
    expect(name).toBe('whisper-server-k-1');
    expect(isBuildFolderOf('whisper-server', name)).toBe(true);
    expect(isBuildFolderOf('whisper-server', `${name}.lock`)).toBe(false);
    expect(isBuildFolderOf('whisper-server', `.tmp-${name}-123`)).toBe(false);
    expect(isBuildFolderOf('llama-server', name)).toBe(false);
  });
});

describe('engine --version output', () => {
  it('keeps the first two lines of llama-server’s', () => {
    expect(
      versionSummary('version: 0.4.0-dev (build 1, commit 80fb11a)\nbuilt with GNU 12.2.0 for Linux x86_64\n'),
    ).toBe('version: 0.4.0-dev (build 1, commit 80fb11a); built with GNU 12.2.0 for Linux x86_64');
  });
  it('is null for a binary that does not know --version (whisper-server prints its usage) or prints nothing', () => {
    expect(versionSummary('error: unknown argument: --version\n\nusage: whisper-server [options]\n')).toBeNull();
    expect(versionSummary('\n\n')).toBeNull();
  });
  it('is bounded', () => {
    expect(versionSummary(`v ${'x'.repeat(5000)}`)!.length).toBe(200);
  });
});

describe('engine --version probe', () => {
  const script = (body: string) => {
    const file = join(tempDir(), 'engine');
    writeFileSync(file, `#!/bin/sh\n${body}\n`);
    chmodSync(file, 0o755);
    return file;
  };
  it('reads stdout and stderr', async () => {
    expect(await probeVersion(script('echo "version: 7 (abc)"; echo built with cc'))).toEqual({
      version: 'version: 7 (abc); built with cc',
      error: null,
    });
    expect(await probeVersion(script('echo "version: 8 (def)" >&2'))).toEqual({
      version: 'version: 8 (def)',
      error: null,
    });
  });
  it('stops a binary that does not finish (it runs: no version), and one the loader cannot run is an error', async () => {
    expect(await probeVersion(script('sleep 30'), undefined, 300)).toEqual({
      version: null,
      error: null,
      timedOut: true,
    });
    expect(
      (await probeVersion(script('echo "error while loading shared libraries: libx.so" >&2; exit 127'))).error,
    ).toMatch(/code 127: error while loading/);
    expect((await probeVersion('/nonexistent/engine')).error).toMatch(/cannot run/);
  });
  it('reads at most 4 KB of an endless answer', async () => {
    const { version, timedOut } = await probeVersion(script('yes version'), undefined, 2000);
    // Either it ended on the timeout or on the pipe: never an unbounded read.
    expect(timedOut === true || (version !== null && version.length <= 200)).toBe(true);
  });
});

describe('build lock', () => {
  it('a second taker waits until the first releases', async () => {
    const dir = tempDir();
    const file = join(dir, 'e.lock');
    const release = await takeBuildLock(file, 10_000);
    let waitedFor: number | null = null;
    let second = false;
    const next = takeBuildLock(file, 10_000, (pid) => (waitedFor = pid)).then((r) => {
      second = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 1500));
    expect(second).toBe(false);
    expect(waitedFor).toBe(process.pid);
    release();
    (await next)();
    expect(existsSync(file)).toBe(false);
  });

  it('takes over a lock whose process is gone', async () => {
    const dir = tempDir();
    const file = join(dir, 'e.lock');
    writeFileSync(file, '999999999\n');
    const release = await takeBuildLock(file, 5_000);
    release();
  });

  it('takes over a lock whose pid now belongs to another process (a killed build, its pid reused)', async () => {
    const dir = tempDir();
    const file = join(dir, 'e.lock');
    const other = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      // Written by a build that started at boot tick 1 under the pid the sleep has now.
      writeFileSync(file, `${other.pid} 1\n`);
      const release = await takeBuildLock(file, 5_000);
      expect(readFileSync(file, 'utf8').split(' ')[0]).toBe(String(process.pid));
      release();
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('gives up after its timeout while a live process holds it', async () => {
    const dir = tempDir();
    const file = join(dir, 'e.lock');
    writeFileSync(file, `${process.pid}\n`);
    await expect(takeBuildLock(file, 500)).rejects.toThrow(/gave up waiting/);
  });
});
