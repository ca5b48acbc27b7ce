import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  decideEngine,
  findCachedBuild,
  locateEngine,
  pickCachedBuild,
  resolveEngineCommand,
  whichOnPath,
} from '../../src-router/backends/engine-binaries';
import { engineInfoSchema } from '../../src-router/contract';
import { tempDir } from '../support/node-harness';

// Engine discovery: PATH first, then the newest finished build in the engines cache; what GET /console/engines says
// for a found, a missing and a built-in family; and which program a bare `llama-server` command word runs.

function build(root: string, engine: string, key: string, builtAt: string, version: string | null, finished = true) {
  const folder = join(root, `${engine}-${key}`);
  mkdirSync(join(folder, 'bin'), { recursive: true });
  const bin = join(folder, 'bin', engine);
  writeFileSync(bin, '#!/bin/sh\necho version: test\n');
  chmodSync(bin, 0o755);
  if (finished) writeFileSync(join(folder, 'build.json'), JSON.stringify({ engine, key, built_at: builtAt, version }));
  return bin;
}

function onPath(dir: string, name: string) {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, name);
  writeFileSync(file, '#!/bin/sh\n');
  chmodSync(file, 0o755);
  return file;
}

describe('engine discovery', () => {
  it('PATH: the first folder holding an executable of that name; relative entries are ignored', () => {
    const execs = new Set(['/b/llama-server', '/c/llama-server', 'rel/llama-server']);
    expect(whichOnPath('llama-server', 'rel:/a:/b:/c', (f) => execs.has(f))).toBe('/b/llama-server');
    expect(whichOnPath('llama-server', '/a', (f) => execs.has(f))).toBeNull();
  });

  it('the newest finished build wins; an unfinished one (no build.json) is not a build', () => {
    const root = tempDir();
    build(root, 'llama-server', 'old-1', '2026-01-01T00:00:00.000Z', 'v old');
    const newer = build(root, 'llama-server', 'new-1', '2026-02-01T00:00:00.000Z', 'v new');
    build(root, 'llama-server', 'half-1', '2026-03-01T00:00:00.000Z', null, false);
    build(root, 'whisper-server', 'w-1', '2026-04-01T00:00:00.000Z', null);
    expect(findCachedBuild('llama-server', root)?.binary).toBe(newer);
    expect(pickCachedBuild([])).toBeNull();
  });

  it('PATH before the cache; the cache only for the buildable families', () => {
    const root = tempDir();
    const cached = build(root, 'whisper-server', 'w-1', '2026-01-01T00:00:00.000Z', 'whisper v');
    expect(locateEngine('whisper-server', '/nonexistent', root)).toEqual({
      path: cached,
      foundIn: 'cache',
      recordedVersion: 'whisper v',
    });
    const bin = tempDir();
    const mine = onPath(bin, 'whisper-server');
    expect(locateEngine('whisper-server', bin, root)).toEqual({ path: mine, foundIn: 'path', recordedVersion: null });
    expect(locateEngine('sd-server', '/nonexistent', root)).toBeNull();
  });

  it('answers for found, missing, broken and built-in families, each valid under the contract', () => {
    const found = decideEngine(
      'llama-server',
      { path: '/c/llama-server', foundIn: 'cache', recordedVersion: 'rec' },
      { version: 'version: 1 (abc)', error: null },
    );
    expect(found).toMatchObject({
      available: true,
      path: '/c/llama-server',
      version: 'version: 1 (abc)',
      found_in: 'cache',
      reason: null,
      how_to_get: null,
    });
    // A binary without --version keeps the version its build recorded.
    expect(
      decideEngine(
        'whisper-server',
        { path: '/c/w', foundIn: 'cache', recordedVersion: 'rec' },
        { version: null, error: null },
      ).version,
    ).toBe('rec');
    const missing = decideEngine('llama-server', null, null);
    expect(missing).toMatchObject({
      available: false,
      reason: 'llama-server not on PATH and not built',
      how_to_get: 'routerdesk engines build --only llama-server',
    });
    expect(decideEngine('vllm', null, null)).toMatchObject({
      available: false,
      reason: 'vllm not on PATH',
      how_to_get: expect.stringContaining('https://github.com/vllm-project/vllm'),
    });
    const broken = decideEngine(
      'koboldcpp',
      { path: '/p/koboldcpp', foundIn: 'path', recordedVersion: null },
      { version: null, error: '--version exited with code 127: libfoo.so missing' },
    );
    expect(broken).toMatchObject({
      available: false,
      path: '/p/koboldcpp',
      reason: expect.stringContaining('code 127'),
    });
    // A slow --version (vLLM importing Python) still means the binary is there.
    expect(
      decideEngine(
        'vllm',
        { path: '/p/vllm', foundIn: 'path', recordedVersion: null },
        { version: null, error: null, timedOut: true },
      ),
    ).toMatchObject({ available: true, version: null, reason: null });
    const sim = decideEngine('sim', null, null);
    expect(sim).toMatchObject({ available: true, found_in: 'builtin', binary: null });
    for (const info of [found, missing, broken, sim, decideEngine('llama-node', null, null)])
      expect(engineInfoSchema.parse(info)).toEqual(info);
  });

  it('a bare llama-server / whisper-server command word not on PATH runs the cached build; anything else stays', () => {
    const root = tempDir();
    const cached = build(root, 'llama-server', 'k-1', '2026-01-01T00:00:00.000Z', null);
    expect(resolveEngineCommand('llama-server', '/nonexistent', root)).toBe(cached);
    expect(resolveEngineCommand('whisper-server', '/nonexistent', root)).toBe('whisper-server');
    expect(resolveEngineCommand('/opt/llama-server', '/nonexistent', root)).toBe('/opt/llama-server');
    expect(resolveEngineCommand('./llama-server', '/nonexistent', root)).toBe('./llama-server');
    expect(resolveEngineCommand('koboldcpp', '/nonexistent', root)).toBe('koboldcpp');
    const bin = tempDir();
    onPath(bin, 'llama-server');
    expect(resolveEngineCommand('llama-server', bin, root)).toBe('llama-server');
  });
});
