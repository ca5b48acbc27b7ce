import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ASSET_CHUNK_BYTES,
  AssetBindingStore,
  AssetError,
  AssetIndex,
  assetResponseHead,
  FileRoots,
  normalizeSha256,
  openAssetRead,
  parseRangeHeader,
  safeAssetFileName,
} from '../../src-router/cluster/assets';
import { ModelHashCache, openStore } from '../../src-router/store';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const dirs: string[] = [];
const temp = () => {
  const d = realpathSync(mkdtempSync(join(tmpdir(), 'routerdesk-asset-parts-')));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('transfer helpers (ASSET-2)', () => {
  it('parses one HTTP byte range against a size, refusing what cannot be served', () => {
    expect(parseRangeHeader(undefined, 100)).toBeUndefined();
    expect(parseRangeHeader('bytes=10-', 100)).toEqual({ start: 10, end: 99 });
    expect(parseRangeHeader('bytes=10-19', 100)).toEqual({ start: 10, end: 19 });
    expect(parseRangeHeader('bytes=90-500', 100)).toEqual({ start: 90, end: 99 });
    expect(parseRangeHeader('bytes=-10', 100)).toEqual({ start: 90, end: 99 });
    for (const bad of ['bytes=100-', 'bytes=5-2', 'bytes=-', 'bytes=-0', 'items=0-1', 'bytes=0-1,5-6', 'bytes=abc-']) {
      expect(() => parseRangeHeader(bad, 100), bad).toThrow(AssetError);
    }
    expect(() => parseRangeHeader('bytes=0-', 0)).toThrow(/not satisfiable/);
  });

  it('answers 200 with the length or 206 with the content range', () => {
    const h = 'a'.repeat(64);
    expect(assetResponseHead({ sha256: h, size: 100 })).toEqual({
      status: 200,
      headers: expect.objectContaining({ 'content-length': '100', 'accept-ranges': 'bytes', 'x-asset-sha256': h }),
    });
    expect(assetResponseHead({ sha256: h, size: 100 }, { start: 10, end: 99 }).headers).toMatchObject({
      'content-length': '90',
      'content-range': 'bytes 10-99/100',
    });
  });

  it('chooses local file names itself: a peer name is a hint, never a path', () => {
    const h = 'ab'.repeat(32);
    expect(safeAssetFileName('../../etc/passwd', h)).toBe('passwd');
    expect(safeAssetFileName('C:\\models\\llama 3.gguf', h)).toBe('llama_3.gguf');
    expect(safeAssetFileName('.bashrc', h)).toBe('bashrc');
    for (const s of ['..', '.', '', null, undefined, 'dir/', '\0'])
      expect(safeAssetFileName(s, h)).toMatch(/^(abababababababab\.bin|_)$/);
    expect(safeAssetFileName('x\u0000y.bin', h)).toBe('x_y.bin');
    expect(() => normalizeSha256('../etc')).toThrow(AssetError);
    expect(normalizeSha256('AB'.repeat(32))).toBe(h);
  });
});

describe('asset index and openAssetRead (ASSET-2/3)', () => {
  it('finds files by verified hash inside the roots only, notices changes, and streams in bounded chunks', async () => {
    const dir = temp();
    const models = join(dir, 'models');
    mkdirSync(join(models, 'sub'), { recursive: true });
    writeFileSync(join(models, 'sub', 'w.gguf'), 'weights-1');
    writeFileSync(join(dir, 'outside.bin'), 'outside');
    symlinkSync(join(dir, 'outside.bin'), join(models, 'escape.bin'));
    const roots = new FileRoots({ models });
    const db = openStore(join(dir, 'store'));
    const cache = new ModelHashCache(db);
    let t = 0;
    const index = new AssetIndex(roots, cache, { now: () => t });
    expect(await index.find(sha('weights-1'))).toMatchObject({ root: 'models', relPath: 'sub/w.gguf', size: 9 });
    expect(await index.find(sha('outside'))).toBeUndefined(); // the escaping symlink is never indexed
    const read = await openAssetRead(roots, cache, sha('weights-1').toUpperCase(), index);
    expect(read).toMatchObject({ sha256: sha('weights-1'), relPath: 'sub/w.gguf', size: 9 });
    const s = await read.stream({ start: 8, end: 8 });
    expect(s.readableHighWaterMark).toBe(ASSET_CHUNK_BYTES);
    const chunks: Buffer[] = [];
    for await (const c of s) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('1');
    // Content changes: the old hash is gone, the new one is found after the next walk.
    writeFileSync(join(models, 'sub', 'w.gguf'), 'weights-2!');
    expect(await index.find(sha('weights-1'))).toBeUndefined();
    t += 10_000;
    expect((await index.find(sha('weights-2!')))?.size).toBe(10);
    await expect(openAssetRead(roots, cache, sha('nothing'), index)).rejects.toMatchObject({
      code: 'not_found',
      status: 404,
    });
    await expect(openAssetRead(roots, cache, 'not-a-hash', index)).rejects.toMatchObject({
      code: 'invalid_hash',
      status: 400,
    });
    db.close();
  });

  it('records bindings newest first and knows the current one', () => {
    const db = openStore(join(temp(), 'store'));
    let t = 0;
    const b = new AssetBindingStore(db, () => ++t);
    const h = sha('x');
    b.record({ reference: 'm', sha256: h, fromNode: 'n1', path: '/a', result: 'bound', reason: null });
    b.record({ reference: 'm', sha256: h, fromNode: 'n1', path: null, result: 'rejected', reason: 'hash_mismatch: …' });
    expect(b.list().map((r) => r.result)).toEqual(['rejected', 'bound']);
    expect(b.list({ result: 'bound' })).toEqual([
      { id: 1, at: 1, reference: 'm', sha256: h, fromNode: 'n1', path: '/a', result: 'bound', reason: null },
    ]);
    expect(b.current(h)?.path).toBe('/a');
    expect(b.current(sha('y'))).toBeUndefined();
    db.close();
  });
});
