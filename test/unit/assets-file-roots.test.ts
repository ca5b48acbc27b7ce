import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AssetError,
  type AssetErrorCode,
  FileRoots,
  fileRootsFromConfig,
  PARTIAL_PREFIX,
} from '../../src-router/cluster/assets';
import { RouterError } from '../../src-router/contract';

let tmp: string;
let root: string;
let roots: FileRoots;

async function refused(p: Promise<unknown>, code: AssetErrorCode): Promise<AssetError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, `expected ${code}`).toBeInstanceOf(AssetError);
  expect((err as AssetError).code).toBe(code);
  return err as AssetError;
}

beforeAll(() => {
  tmp = realpathSync(mkdtempSync(join(tmpdir(), 'routerdesk-assets-')));
  root = join(tmp, 'root');
  mkdirSync(join(root, 'sub'), { recursive: true });
  mkdirSync(join(tmp, 'outside', 'inner'), { recursive: true });
  mkdirSync(join(tmp, 'rootx'));
  writeFileSync(join(root, 'a.bin'), 'aaaa');
  writeFileSync(join(root, 'sub', 'b.bin'), 'bb');
  writeFileSync(join(root, `${PARTIAL_PREFIX}123`), 'partial');
  writeFileSync(join(tmp, 'outside', 'secret.txt'), 'secret');
  writeFileSync(join(tmp, 'outside', 'inner', 'deeper.txt'), 'secret');
  writeFileSync(join(tmp, 'rootx', 'evil.txt'), 'evil');
  symlinkSync(join(root, 'a.bin'), join(root, 'link-in.bin')); // inside: allowed
  symlinkSync(join(tmp, 'outside', 'secret.txt'), join(root, 'link-out.bin')); // file symlink escape
  symlinkSync('../outside', join(root, 'dir-out')); // folder symlink escape (relative target)
  symlinkSync(join(tmp, 'nowhere'), join(root, 'dangling'));
  symlinkSync('loop', join(root, 'loop'));
  let deep = join(root, 'deep');
  for (let i = 0; i < 10; i++) deep = join(deep, `d${i}`);
  mkdirSync(deep, { recursive: true });
  writeFileSync(join(deep, 'too-deep.bin'), 'x');
  writeFileSync(join(root, 'deep', 'shallow.bin'), 'x');
  symlinkSync(root, join(tmp, 'root-link'));
  roots = new FileRoots({ models: root, linked: join(tmp, 'root-link'), unset: '' });
});

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('FileRoots.resolve (ASSET-3)', () => {
  it('resolves a plain relative path, a path through an inside symlink, and a root that is itself a symlink', async () => {
    expect(await roots.resolve('models', 'a.bin')).toEqual({
      root: 'models',
      relPath: 'a.bin',
      absPath: join(root, 'a.bin'),
      exists: true,
      kind: 'file',
    });
    expect(await roots.resolve('models', './sub//b.bin')).toMatchObject({
      relPath: 'sub/b.bin',
      absPath: join(root, 'sub', 'b.bin'),
      kind: 'file',
    });
    expect(await roots.resolve('models', 'link-in.bin')).toMatchObject({
      relPath: 'link-in.bin',
      absPath: join(root, 'a.bin'),
      exists: true,
    });
    expect(await roots.resolve('linked', 'sub/b.bin')).toMatchObject({
      absPath: join(root, 'sub', 'b.bin'),
      exists: true,
    });
    expect(await roots.resolve('models', 'new/folder/file.bin')).toMatchObject({
      relPath: 'new/folder/file.bin',
      absPath: join(root, 'new', 'folder', 'file.bin'),
      exists: false,
      kind: null,
    });
  });

  it('refuses `..` segments, wherever they are and however they are separated', async () => {
    for (const p of [
      '../outside/secret.txt',
      '../../etc/passwd',
      'sub/../../outside/secret.txt',
      'sub/../a.bin',
      '..',
      '..\\outside\\secret.txt',
      'sub\\..\\..\\outside',
      './../outside',
    ]) {
      await refused(roots.resolve('models', p), 'path_outside_root');
    }
  });

  it('refuses percent-encoded traversal once decoded (the HTTP layer decodes), and keeps double-encoded names literal inside the root', async () => {
    for (const encoded of [
      '..%2Foutside%2Fsecret.txt',
      '%2e%2e/outside/secret.txt',
      '%2E%2E%2F%2E%2E%2Fetc%2Fpasswd',
      '..%5Coutside%5Csecret.txt',
      'sub%2F..%2F..%2Foutside',
      '%2Fetc%2Fpasswd',
    ]) {
      await refused(roots.resolve('models', decodeURIComponent(encoded)), 'path_outside_root');
    }
    const once = decodeURIComponent('%252e%252e%252foutside'); // '%2e%2e%2foutside': a literal (odd) file name
    const r = await roots.resolve('models', once);
    expect(r).toMatchObject({ relPath: '%2e%2e%2foutside', exists: false });
    expect(r.absPath.startsWith(root + '/')).toBe(true);
  });

  it('refuses absolute paths outside the root (a sibling sharing the prefix too) and accepts absolute paths inside it', async () => {
    for (const p of [
      join(tmp, 'outside', 'secret.txt'),
      '/etc/passwd',
      join(tmp, 'rootx', 'evil.txt'),
      tmp,
      'C:\\Windows\\system32\\config',
      'c:/x',
    ]) {
      await refused(roots.resolve('models', p), 'path_outside_root');
    }
    expect(await roots.resolve('models', join(root, 'sub', 'b.bin'))).toMatchObject({
      relPath: 'sub/b.bin',
      exists: true,
    });
    expect(await roots.resolve('linked', join(tmp, 'root-link', 'a.bin'))).toMatchObject({
      relPath: 'a.bin',
      exists: true,
    });
  });

  it('refuses a file symlink and a folder symlink that leave the root, also for files that do not exist yet', async () => {
    await refused(roots.resolve('models', 'link-out.bin'), 'path_outside_root');
    await refused(roots.resolve('models', 'dir-out/secret.txt'), 'path_outside_root');
    await refused(roots.resolve('models', 'dir-out/inner/deeper.txt'), 'path_outside_root');
    await refused(roots.resolve('models', 'dir-out/not-yet.bin'), 'path_outside_root');
    await refused(roots.resolve('models', 'dir-out/new/folder/not-yet.bin'), 'path_outside_root');
    await refused(roots.resolve('models', 'dir-out'), 'path_outside_root');
  });

  it('refuses dangling symlinks and symlink loops (their target cannot be checked)', async () => {
    await refused(roots.resolve('models', 'dangling'), 'path_outside_root');
    await refused(roots.resolve('models', 'dangling/child.bin'), 'path_outside_root');
    await refused(roots.resolve('models', 'loop'), 'path_outside_root');
  });

  it('refuses NUL bytes, empty paths and unknown roots with their own codes and HTTP statuses', async () => {
    const nul = await refused(roots.resolve('models', 'a.bin\0.txt'), 'invalid_path');
    expect(nul.status).toBe(400);
    expect(nul).toBeInstanceOf(RouterError);
    await refused(roots.resolve('models', ''), 'invalid_path');
    await refused(roots.resolve('models', './'), 'invalid_path');
    const unknown = await refused(roots.resolve('nope', 'a.bin'), 'unknown_root');
    expect(unknown.status).toBe(404);
    await refused(roots.resolve('unset', 'a.bin'), 'unknown_root'); // an empty folder is no root
    const outside = await refused(roots.resolve('models', '../x'), 'path_outside_root');
    expect(outside.status).toBe(403);
    expect(outside.param).toBe('path');
  });

  it('resolveFile wants an existing regular file', async () => {
    expect((await roots.resolveFile('models', 'a.bin')).absPath).toBe(join(root, 'a.bin'));
    await refused(roots.resolveFile('models', 'sub'), 'not_found');
    await refused(roots.resolveFile('models', 'missing.bin'), 'not_found');
    await refused(roots.resolveFile('models', 'link-out.bin'), 'path_outside_root');
  });

  it('a root whose folder is missing is not_found, and root names are checked', async () => {
    const r = new FileRoots({ gone: join(tmp, 'does-not-exist') });
    await refused(r.resolve('gone', 'a'), 'not_found');
    expect((await r.listAll()).entries).toEqual([]);
    expect(() => new FileRoots({ 'bad/name': tmp })).toThrow(/file root name/);
    expect(
      fileRootsFromConfig({
        models: { config_dir: root, shared_dir: '', startup_model: '', stt_selector: 'auto' },
      }).names(),
    ).toEqual(['models']);
  });
});

describe('FileRoots.list (ASSET-3)', () => {
  it('lists regular files inside the root only: no escaping symlinks, no walked symlinked folders, no temp files', async () => {
    const inv = await roots.list('models');
    expect(inv.truncated).toBe(false);
    expect(inv.entries.map((e) => e.path)).toEqual(['a.bin', 'deep/shallow.bin', 'link-in.bin', 'sub/b.bin']);
    expect(inv.entries[0]).toEqual({ root: 'models', path: 'a.bin', size: 4, mtimeMs: expect.any(Number) });
    for (const e of inv.entries)
      expect((await roots.resolve('models', e.path)).absPath.startsWith(root + '/')).toBe(true);
    const all = JSON.stringify(await roots.listAll());
    expect(all).not.toContain('secret');
    expect(all).not.toContain('evil');
    expect(all).not.toContain(PARTIAL_PREFIX);
  });

  it('is bounded in depth and count', async () => {
    expect((await roots.list('models', { maxDepth: 20 })).entries.map((e) => e.path)).toContain(
      'deep/d0/d1/d2/d3/d4/d5/d6/d7/d8/d9/too-deep.bin',
    );
    expect((await roots.list('models', { maxDepth: 1 })).entries.map((e) => e.path)).toEqual(['a.bin', 'link-in.bin']);
    expect(await roots.list('models', { maxEntries: 2 })).toMatchObject({
      truncated: true,
      entries: [{ path: 'a.bin' }, { path: 'deep/shallow.bin' }],
    });
  });

  it('lists a symlinked root by its own relative names', async () => {
    expect((await roots.list('linked')).entries.map((e) => `${e.root}:${e.path}`)).toEqual([
      'linked:a.bin',
      'linked:deep/shallow.bin',
      'linked:link-in.bin',
      'linked:sub/b.bin',
    ]);
  });
});
