import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AnalyticsStore, MIGRATIONS, ModelHashCache, migrate, openStore, schemaVersion } from '../../src-router/store';
import { tempDir } from '../support/node-harness';

describe('store', () => {
  it('creates router.db in WAL mode with every migration, and reopening changes nothing', () => {
    const dir = tempDir();
    const db = openStore(dir);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(schemaVersion(db)).toBe(MIGRATIONS.at(-1)!.version);
    db.close();
    const again = openStore(dir);
    expect((again.prepare('SELECT COUNT(*) AS n FROM schema_migrations').get() as { n: number }).n).toBe(
      MIGRATIONS.length,
    );
    again.close();
  });

  it('refuses a store written by a newer build', () => {
    const db = openStore(tempDir());
    db.prepare('INSERT INTO schema_migrations VALUES (999, ?, 0)').run('future');
    expect(() => migrate(db, MIGRATIONS)).toThrow(/newer than this build/);
  });

  it('records requests with their work measure and loads with the displaced model', () => {
    const db = openStore(tempDir());
    const a = new AnalyticsStore(db);
    a.recordRequest({
      finishedAt: 1000,
      nodeId: 'n',
      model: 'm',
      localId: 'm-1',
      backend: 'sim',
      endpoint: 'chat',
      streamed: true,
      promptBytes: 120,
      tokensGenerated: 16,
      queueWaitMs: 3.4,
      durationMs: 80.6,
      outcome: 'ok',
      status: 200,
    });
    a.recordRequest({
      finishedAt: 2000,
      nodeId: 'n',
      model: 'img',
      localId: 'img',
      backend: 'sim',
      endpoint: 'image',
      streamed: false,
      imagePixels: 4096,
      imageSteps: 4,
      imageCount: 1,
      queueWaitMs: 0,
      durationMs: 10,
      outcome: 'error',
      status: 502,
      error: 'crash',
    });
    a.recordLoad({
      finishedAt: 900,
      nodeId: 'n',
      model: 'm',
      localId: 'm-1',
      backend: 'sim',
      lane: 'text',
      durationMs: 250,
      success: true,
      displacedLocalId: 'other',
    });
    expect(a.requestsFor('m')).toEqual([
      expect.objectContaining({
        streamed: true,
        promptBytes: 120,
        tokensGenerated: 16,
        queueWaitMs: 3,
        durationMs: 81,
        imagePixels: null,
      }),
    ]);
    expect(a.recentRequests()[0]).toMatchObject({ model: 'img', imagePixels: 4096, outcome: 'error', error: 'crash' });
    expect(a.loadsFor('m-1')).toEqual([
      expect.objectContaining({ success: true, displacedLocalId: 'other', lane: 'text', durationMs: 250 }),
    ]);
  });

  it('caches weight hashes by path, size and mtime', async () => {
    const dir = tempDir();
    const db = openStore(dir);
    const cache = new ModelHashCache(db);
    const file = join(dir, 'w.bin');
    writeFileSync(file, 'abc');
    const h1 = await cache.hash(file);
    expect(h1).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(cache.cached(file)).toBe(h1);
    writeFileSync(file, 'abd');
    utimesSync(file, new Date(), new Date(Date.now() + 5000));
    expect(cache.cached(file)).toBeUndefined();
    expect(await cache.hash(file)).not.toBe(h1);
  });
});
