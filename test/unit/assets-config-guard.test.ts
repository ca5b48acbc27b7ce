import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AssetBindingStore,
  AssetError,
  type AssetErrorCode,
  AssetService,
  FileRoots,
  fetchAsset,
  fileRootsFromConfig,
  openAssetRead,
} from '../../src-router/cluster/assets';
import { type Db, ModelHashCache, openStore } from '../../src-router/store';

// Issue #9: config folders are never an asset target or an asset source. An asset fetch must not be able to write a
// `*.yaml` into models.config_dir (the next start would load it and run its `command`), and no inventory or hash
// lookup may serve a model config (they carry `env`) or the store, whatever path trick is tried.

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const CONFIG = 'name: chatty\nbackend: sim\ncapabilities: [text]\nenv:\n  API_SECRET: hunter2\n';
const WEIGHTS = 'weights that may travel';

let tmp: string;
let area: string; // models.shared_dir: holds the config folder and the store as subfolders
let configDir: string;
let storeDir: string;
let db: Db;
let cache: ModelHashCache;
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
  tmp = realpathSync(mkdtempSync(join(tmpdir(), 'routerdesk-config-guard-')));
  area = join(tmp, 'area');
  configDir = join(area, 'models');
  storeDir = join(area, 'store');
  mkdirSync(join(configDir, 'weights'), { recursive: true });
  mkdirSync(join(area, 'weights'), { recursive: true });
  writeFileSync(join(configDir, 'chatty.yaml'), CONFIG);
  writeFileSync(join(configDir, 'weights', 'next-to-yaml.gguf'), 'weights beside the yaml');
  writeFileSync(join(area, 'weights', 'w.gguf'), WEIGHTS);
  symlinkSync(configDir, join(area, 'cfg-link')); // a folder symlink into the config folder, inside the root
  symlinkSync(join(configDir, 'chatty.yaml'), join(area, 'leak.yaml')); // a file symlink to a config
  symlinkSync(configDir, join(tmp, 'models-alias')); // the config folder configured through a symlink
  db = openStore(storeDir);
  cache = new ModelHashCache(db);
  roots = fileRootsFromConfig({
    models: { config_dir: configDir, shared_dir: area },
    cluster: { store_dir: storeDir },
  });
});

afterAll(() => {
  db.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('protected folders in file roots (issue #9)', () => {
  it('a root containing the config folder and the store lists neither, nor a symlink into them', async () => {
    const inv = await roots.list('shared');
    expect(inv.entries.map((e) => e.path)).toEqual(['weights/w.gguf']);
    const all = await roots.listAll();
    expect(all.entries.map((e) => `${e.root}:${e.path}`)).toEqual(['shared:weights/w.gguf']);
    expect(JSON.stringify(all)).not.toMatch(/yaml|router\.db|next-to-yaml/);
    expect(await roots.usableNames()).toEqual(['shared']);
    expect(roots.names()).toEqual(['models', 'shared']);
  });

  it('the models root (= models.config_dir) is refused as a whole with a 403 naming the folder', async () => {
    const list = await refused(roots.list('models'), 'protected_folder');
    expect(list.status).toBe(403);
    expect(list.param).toBe('root');
    expect(list.message).toMatch(
      /file root 'models' is in the models config folder \(models\.config_dir\).*never an asset source or target/,
    );
    expect(list.message).not.toContain(tmp); // peers see the setting's name, not this node's paths
    for (const p of ['chatty.yaml', 'weights/next-to-yaml.gguf', 'new.yaml', 'a/b/c.yaml'])
      await refused(roots.resolve('models', p), 'protected_folder');
  });

  it('every path trick into the config folder or the store is refused: direct, absolute, symlinked, `..`, not-yet-existing', async () => {
    const cases: [string, AssetErrorCode][] = [
      ['models/chatty.yaml', 'protected_folder'],
      ['models', 'protected_folder'],
      ['models/evil.yaml', 'protected_folder'], // does not exist yet: a write target
      ['models/new/deeper/evil.yaml', 'protected_folder'],
      ['./models//chatty.yaml', 'protected_folder'],
      ['models\\chatty.yaml', 'protected_folder'],
      [join(configDir, 'chatty.yaml'), 'protected_folder'], // absolute, inside the root
      ['cfg-link/chatty.yaml', 'protected_folder'], // folder symlink inside the root that points into the config folder
      ['cfg-link/evil.yaml', 'protected_folder'],
      ['cfg-link', 'protected_folder'],
      ['leak.yaml', 'protected_folder'], // file symlink to a config
      ['store/router.db', 'protected_folder'],
      ['store', 'protected_folder'],
      ['weights/../models/chatty.yaml', 'path_outside_root'], // `..` is refused before anything else
    ];
    for (const [p, code] of cases) {
      const err = await refused(roots.resolve('shared', p), code);
      expect(err.status, p).toBe(403);
      if (code === 'protected_folder')
        expect(err.message, p).toMatch(
          /is in (the models config folder \(models\.config_dir\)|the store \(cluster\.store_dir\))/,
        );
    }
    expect(await roots.resolve('shared', 'weights/w.gguf')).toMatchObject({ exists: true, kind: 'file' });
    expect(await roots.resolve('shared', 'models-not/x.yaml')).toMatchObject({ exists: false }); // a sibling sharing the prefix is fine
  });

  it('a config folder configured through a symlink, or not created yet, is protected by its real path', async () => {
    const viaAlias = fileRootsFromConfig({ models: { config_dir: join(tmp, 'models-alias'), shared_dir: area } });
    await refused(viaAlias.resolve('shared', 'models/chatty.yaml'), 'protected_folder');
    await refused(viaAlias.resolve('shared', 'cfg-link/evil.yaml'), 'protected_folder');
    expect((await viaAlias.list('shared')).entries.map((e) => e.path)).not.toContain('models/chatty.yaml');
    const later = fileRootsFromConfig({ models: { config_dir: join(area, 'later', 'configs'), shared_dir: area } });
    await refused(later.resolve('shared', 'later/configs/evil.yaml'), 'protected_folder');
    expect(await later.resolve('shared', 'later/other.bin')).toMatchObject({ exists: false });
    // The node config file itself (it holds the tokens), when known, is protected; its folder stays usable.
    const withFile = fileRootsFromConfig(
      { models: { config_dir: '', shared_dir: tmp } },
      {},
      { configFile: join(area, 'node.yaml') },
    );
    const err = await refused(withFile.resolve('shared', 'area/node.yaml'), 'protected_folder');
    expect(err.message).toMatch(/the node config file/);
    expect((await withFile.list('shared')).entries.map((e) => e.path)).not.toContain('area/node.yaml');
  });

  it("the node config's backup and temporaries are protected as the file is, listed and served by hash nowhere (issue #37 item 2)", async () => {
    const folder = join(tmp, 'conf-family');
    mkdirSync(folder, { recursive: true });
    const secret = 'cluster:\n  token: the-cluster-token-in-the-backup\n';
    const family = ['node.yaml', 'node.yaml.bak', 'node.yaml.tmp-123-abcdef', 'node.yaml.bak.tmp-9-0a1b2c'];
    family.forEach((name, i) => writeFileSync(join(folder, name), `${secret}# ${i}\n`));
    writeFileSync(join(folder, 'node.yamlx'), 'not the config');
    writeFileSync(join(folder, 'other.yaml.bak'), 'another file');
    symlinkSync(folder, join(tmp, 'conf-alias'));
    // The config named by its real path, and through a symlinked folder: the same files are protected.
    for (const configFile of [join(folder, 'node.yaml'), join(tmp, 'conf-alias', 'node.yaml')]) {
      const withFile = fileRootsFromConfig({ models: { config_dir: '', shared_dir: folder } }, {}, { configFile });
      expect((await withFile.list('shared')).entries.map((e) => e.path)).toEqual(['node.yamlx', 'other.yaml.bak']);
      for (const name of family) {
        const err = await refused(withFile.resolve('shared', name), 'protected_folder');
        expect(err.message).toMatch(/is the node config file or a backup or temporary copy of it/);
        await refused(openAssetRead(withFile, cache, sha(`${secret}# ${family.indexOf(name)}\n`)), 'not_found');
      }
      expect((await openAssetRead(withFile, cache, sha('not the config'))).relPath).toBe('node.yamlx');
    }
  });

  it('plain FileRoots without protected folders behave as before', async () => {
    const plain = new FileRoots({ models: configDir });
    expect((await plain.list('models')).entries.map((e) => e.path)).toEqual([
      'chatty.yaml',
      'weights/next-to-yaml.gguf',
    ]);
  });
});

describe('assets never read from or written into protected folders (issue #9)', () => {
  it('a config is never served by hash, and a fetch never substitutes it', async () => {
    await refused(openAssetRead(roots, cache, sha(CONFIG)), 'not_found');
    expect((await openAssetRead(roots, cache, sha(WEIGHTS))).relPath).toBe('weights/w.gguf');
    // Asking for the bytes of a config: the local config is not bound as a substitute; the (unreachable) peer is asked.
    const bindings = new AssetBindingStore(db);
    const err = await refused(
      fetchAsset({
        baseUrl: 'http://127.0.0.1:1',
        token: 't',
        sha256: sha(CONFIG),
        maxBytes: 1 << 20,
        destRoot: { roots, root: 'shared' },
        destRelPath: 'copy.yaml',
        timeoutMs: 2000,
        bindings,
        hashCache: cache,
      }),
      'transfer_failed',
    );
    expect(err.status).toBe(502);
    expect(bindings.list({ sha256: sha(CONFIG) }).map((b) => b.result)).toEqual(['rejected']);
  });

  it('a fetch into the config folder is refused before any transfer, recorded as rejected, and leaves nothing behind', async () => {
    const before = readdirSync(configDir).sort();
    const bindings = new AssetBindingStore(db);
    const base = {
      baseUrl: 'http://127.0.0.1:1',
      token: 't',
      sha256: sha('evil'),
      maxBytes: 1 << 20,
      timeoutMs: 2000,
      bindings,
      hashCache: cache,
    };
    for (const [root, rel] of [
      ['models', 'evil.yaml'],
      ['shared', 'models/evil.yaml'],
      ['shared', 'cfg-link/evil.yaml'],
      ['shared', 'store/evil.yaml'],
    ]) {
      const err = await refused(
        fetchAsset({ ...base, destRoot: { roots, root }, destRelPath: rel, reference: `${root}:${rel}` }),
        'protected_folder',
      );
      expect(err.status).toBe(403);
    }
    expect(readdirSync(configDir).sort()).toEqual(before);
    expect(existsSync(join(storeDir, 'evil.yaml'))).toBe(false);
    const rejected = bindings.list({ sha256: sha('evil') });
    expect(rejected.map((b) => b.result)).toEqual(['rejected', 'rejected', 'rejected', 'rejected']);
    expect(rejected.every((b) => b.reason?.startsWith('protected_folder:'))).toBe(true);
  });

  it('the asset service: inventory without protected entries or roots, 403 for a protected folder, fetch with no shared root refused', async () => {
    const opts = {
      hashCache: cache,
      db,
      token: 't',
      maxBytes: 1 << 20,
      transferTimeoutMs: 2000,
      relatedUrls: ['http://127.0.0.1:1'],
      nodeUrl: async () => 'http://127.0.0.1:1',
      localNodeId: 'n',
      preloadLocal: async () => {},
      loadTimeoutMs: 1000,
    };
    const svc = new AssetService({ ...opts, roots });
    const inv = await svc.inventory();
    expect(inv.roots).toEqual(['shared']);
    expect(inv.entries.map((e) => e.path)).toEqual(['weights/w.gguf']);
    await refused(svc.inventory('shared', 'models'), 'protected_folder');
    await refused(svc.inventory('shared', 'cfg-link'), 'protected_folder');
    await refused(svc.inventory('models'), 'protected_folder');
    // No models.shared_dir: the default target is the models root, which is the config folder.
    const noShared = new AssetService({
      ...opts,
      roots: fileRootsFromConfig({
        models: { config_dir: configDir, shared_dir: '' },
        cluster: { store_dir: storeDir },
      }),
    });
    const err = await refused(
      noShared.fetch({ url: 'http://127.0.0.1:1', sha256: sha('evil2'), name: 'evil.yaml' }),
      'protected_folder',
    );
    expect(err.message).toMatch(/file root 'models' is in the models config folder.*models\.shared_dir/);
    expect(existsSync(join(configDir, 'evil.yaml'))).toBe(false);
  });
});
