import { createHash, randomBytes } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ASSET_BY_HASH_PATH,
  AssetBindingStore,
  AssetError,
  assetResponseHead,
  type FetchAssetOptions,
  FileRoots,
  fetchAsset,
  openAssetRead,
  PARTIAL_PREFIX,
  parseRangeHeader,
} from '../../src-router/cluster/assets';
import type { Db } from '../../src-router/store';
import { ModelHashCache, openStore } from '../../src-router/store';

// The serving side is the real `openAssetRead` over real files behind a plain node:http server with a token check:
// it stands in for the node route the lead wires (GET /router/v1/node/assets/by-hash/:sha).
const TOKEN = 'cluster-token-for-assets';
const SIZE = 3 * 1024 * 1024 + 12345;

let tmp: string;
let server: Server;
let baseUrl: string;
let requests = 0;
let serverDb: Db;
let clientDb: Db;
let data: Buffer;
let hash: string;
let serverRoots: FileRoots;
let clientRoots: FileRoots;
let clientCache: ModelHashCache;
let bindings: AssetBindingStore;
let dest: string;

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

beforeAll(async () => {
  tmp = realpathSync(mkdtempSync(join(tmpdir(), 'routerdesk-asset-transfer-')));
  mkdirSync(join(tmp, 'server-models'));
  data = randomBytes(SIZE);
  hash = sha256(data);
  writeFileSync(join(tmp, 'server-models', 'big.gguf'), data);
  writeFileSync(join(tmp, 'server-models', 'small.bin'), 'small asset');
  serverDb = openStore(join(tmp, 'server-store'));
  serverRoots = new FileRoots({ models: join(tmp, 'server-models') });
  const serverCache = new ModelHashCache(serverDb);
  server = createServer((req, res) => {
    requests++;
    const m = new RegExp(`^${ASSET_BY_HASH_PATH}/([^/?]+)$`).exec(req.url ?? '');
    const fail = (status: number, code: string, message: string) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message, code } }));
    if (!m || req.method !== 'GET') return void fail(404, 'not_found', 'no route');
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return void fail(401, 'unauthorized', 'wrong cluster token');
    void (async () => {
      try {
        const asset = await openAssetRead(serverRoots, serverCache, decodeURIComponent(m[1]));
        const range = parseRangeHeader(req.headers.range, asset.size);
        const head = assetResponseHead(asset, range);
        if (req.headers['x-test-no-length']) delete head.headers['content-length']; // chunked: the client must cut by counting
        res.writeHead(head.status, head.headers);
        await pipeline(await asset.stream(range), res);
      } catch (err) {
        if (res.headersSent) return void res.destroy();
        if (err instanceof AssetError) return void fail(err.status, err.code, err.message);
        fail(500, 'internal_error', String(err));
      }
    })();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
  serverDb.close();
  clientDb?.close();
  rmSync(tmp, { recursive: true, force: true });
});

beforeEach(() => {
  clientDb?.close();
  const side = mkdtempSync(join(tmp, 'client-'));
  dest = join(side, 'models');
  mkdirSync(dest);
  mkdirSync(join(side, 'shared'));
  clientDb = openStore(join(side, 'store'));
  clientRoots = new FileRoots({ models: dest, shared: join(side, 'shared') });
  clientCache = new ModelHashCache(clientDb);
  bindings = new AssetBindingStore(clientDb);
  requests = 0;
});

const opts = (over: Partial<FetchAssetOptions> = {}): FetchAssetOptions => ({
  baseUrl,
  token: TOKEN,
  sha256: hash,
  expectedSize: SIZE,
  maxBytes: 8 * 1024 * 1024,
  destRoot: { roots: clientRoots, root: 'models' },
  destRelPath: 'incoming/big.gguf',
  timeoutMs: 20_000,
  bindings,
  hashCache: clientCache,
  reference: 'big-model',
  fromNode: 'slave-1',
  ...over,
});

/** Every file under the client's models root, partial files included. */
const leftovers = () =>
  readdirSync(dest, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name);

describe('asset transfer between nodes (ASSET-2/3)', () => {
  it('downloads a 3 MiB file by hash, verifies it, places it atomically and records it bound', async () => {
    const r = await fetchAsset(opts());
    expect(r).toMatchObject({
      result: 'bound',
      sha256: hash,
      root: 'models',
      relPath: 'incoming/big.gguf',
      path: join(dest, 'incoming', 'big.gguf'),
      size: SIZE,
      downloaded: SIZE,
    });
    expect(sha256(readFileSync(r.path))).toBe(hash);
    expect(leftovers()).toEqual(['big.gguf']);
    expect(bindings.list()).toEqual([
      expect.objectContaining({
        id: r.bindingId,
        reference: 'big-model',
        sha256: hash,
        fromNode: 'slave-1',
        path: r.path,
        result: 'bound',
        reason: null,
      }),
    ]);
    // Asking again binds the file already in place, without a transfer.
    expect(await fetchAsset(opts())).toMatchObject({ result: 'bound', downloaded: 0 });
    expect(requests).toBe(1);
    expect(bindings.list()[0]).toMatchObject({ result: 'bound', reason: 'already in place' });
  });

  it('serves a resumption range from the start offset', async () => {
    const res = await fetch(`${baseUrl}${ASSET_BY_HASH_PATH}/${hash}`, {
      headers: { authorization: `Bearer ${TOKEN}`, range: 'bytes=3145728-' },
    });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes 3145728-${SIZE - 1}/${SIZE}`);
    expect(Buffer.from(await res.arrayBuffer()).equals(data.subarray(3145728))).toBe(true);
    const bad = await fetch(`${baseUrl}${ASSET_BY_HASH_PATH}/${hash}`, {
      headers: { authorization: `Bearer ${TOKEN}`, range: `bytes=${SIZE}-` },
    });
    expect(bad.status).toBe(416);
  });

  it('refuses bytes whose hash is not the one asked for (a peer whose file changed under a stale hash): hash_mismatch, nothing left', async () => {
    const file = join(tmp, 'server-models', 'small.bin');
    const when = new Date('2024-01-01T00:00:00Z');
    utimesSync(file, when, when);
    const smallHash = sha256('small asset');
    await fetchAsset(opts({ sha256: smallHash, expectedSize: undefined, destRelPath: 'warmup.bin' })); // the server has hashed it
    writeFileSync(file, 'SMALL ASSET'); // same size, same mtime: the peer still believes the old hash
    utimesSync(file, when, when);
    const err = await fetchAsset(
      opts({ sha256: smallHash, expectedSize: undefined, destRelPath: 'small.bin', hashCache: undefined }),
    ).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'hash_mismatch', status: 502 });
    expect(existsSync(join(dest, 'small.bin'))).toBe(false);
    expect(leftovers()).toEqual(['warmup.bin']);
    expect(bindings.list()[0]).toMatchObject({
      result: 'rejected',
      sha256: smallHash,
      reason: expect.stringMatching(/^hash_mismatch: /),
    });
    writeFileSync(file, 'small asset');
  });

  it('refuses a transfer larger than maxBytes, whether announced or only counted: asset_too_large, nothing left', async () => {
    const limit = 1024 * 1024;
    await expect(fetchAsset(opts({ maxBytes: limit }))).rejects.toMatchObject({ code: 'asset_too_large', status: 413 });
    expect(requests).toBe(0); // the expected size already exceeds the limit
    await expect(fetchAsset(opts({ maxBytes: limit, expectedSize: undefined }))).rejects.toMatchObject({
      code: 'asset_too_large',
    });
    expect(requests).toBe(1); // refused on the announced length
    const chunked: typeof fetch = (url, init) =>
      fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), 'x-test-no-length': '1' } });
    const err = await fetchAsset(opts({ maxBytes: limit, expectedSize: undefined, fetchImpl: chunked })).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'asset_too_large', message: expect.stringContaining('transfer cut') });
    expect(leftovers()).toEqual([]);
    expect(bindings.list().map((b) => b.result)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(bindings.list()[0].reason).toMatch(/^asset_too_large: /);
  });

  it('a wrong token is refused by the peer and recorded rejected', async () => {
    const err = await fetchAsset(opts({ token: 'wrong' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AssetError);
    expect(err).toMatchObject({ code: 'transfer_refused', message: expect.stringContaining('401') });
    expect(leftovers()).toEqual([]);
    expect(bindings.list()).toEqual([
      expect.objectContaining({
        result: 'rejected',
        fromNode: 'slave-1',
        reason: expect.stringContaining('wrong cluster token'),
      }),
    ]);
  });

  it('binds a local file with the same hash instead of downloading it: substituted', async () => {
    copyFileSync(join(tmp, 'server-models', 'big.gguf'), join(clientRoots.dir('shared'), 'already-here.gguf'));
    const r = await fetchAsset(opts());
    expect(r).toMatchObject({
      result: 'substituted',
      root: 'shared',
      relPath: 'already-here.gguf',
      downloaded: 0,
      size: SIZE,
    });
    expect(requests).toBe(0);
    expect(leftovers()).toEqual([]);
    expect(bindings.list()[0]).toMatchObject({
      result: 'substituted',
      path: join(clientRoots.dir('shared'), 'already-here.gguf'),
      reason: 'same sha256 already at shared:already-here.gguf',
    });
  });

  it('never writes outside the root, never over other bytes, and only from a configured node', async () => {
    for (const destRelPath of ['../escape.gguf', '/etc/evil.gguf', 'a\0b']) {
      await expect(fetchAsset(opts({ destRelPath }))).rejects.toBeInstanceOf(AssetError);
    }
    writeFileSync(join(dest, 'taken.gguf'), 'other bytes');
    await expect(fetchAsset(opts({ destRelPath: 'taken.gguf' }))).rejects.toMatchObject({
      code: 'destination_exists',
      status: 409,
    });
    expect(readFileSync(join(dest, 'taken.gguf'), 'utf8')).toBe('other bytes');
    await expect(fetchAsset(opts({ allowedBaseUrls: ['http://127.0.0.1:1'] }))).rejects.toMatchObject({
      code: 'source_not_configured',
      status: 403,
    });
    expect(requests).toBe(0);
    expect(existsSync(join(tmp, 'escape.gguf'))).toBe(false);
    expect(readdirSync(dest).filter((n) => n.startsWith(PARTIAL_PREFIX))).toEqual([]);
    expect(bindings.list().map((b) => b.reason?.split(':')[0])).toEqual([
      'source_not_configured',
      'destination_exists',
      'invalid_path',
      'path_outside_root',
      'path_outside_root',
    ]);
    // With the configured relationship it works.
    expect(await fetchAsset(opts({ allowedBaseUrls: [`${baseUrl}/`] }))).toMatchObject({ result: 'bound' });
  });
});
