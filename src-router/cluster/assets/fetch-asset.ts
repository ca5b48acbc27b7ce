import { createHash, randomUUID } from 'node:crypto';
import { type FileHandle, mkdir, open, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { errorText, fetchAnswer } from '../../backends/answer-limits';
import { type ModelHashCache, sha256File } from '../../store';
import { normalizeUrl } from '../node-client';
import { assetIndexFor } from './asset-index';
import type { AssetBindingStore, BindingResult } from './binding-store';
import { AssetError, normalizeSha256 } from './errors';
import { type FileRoots, PARTIAL_PREFIX, type ResolvedPath } from './file-roots';

/** The node route that serves assets by hash (node token); `fetchAsset` calls it. */
export const ASSET_BY_HASH_PATH = '/router/v1/node/assets/by-hash';
export const assetByHashUrl = (baseUrl: string, sha256: string) =>
  `${normalizeUrl(baseUrl)}${ASSET_BY_HASH_PATH}/${sha256}`;

export interface FetchAssetOptions {
  /** The peer node; only a configured one (pass `allowedBaseUrls` to have it checked here). */
  baseUrl: string;
  token: string;
  sha256: string;
  /** When known (from the peer's inventory): a different length is `size_mismatch`. */
  expectedSize?: number;
  /** Hard limit: the transfer is cut as soon as more arrives (`asset_too_large`). */
  maxBytes: number;
  /** Where the file goes, chosen by this node: never a path the peer sent. */
  destRoot: { roots: FileRoots; root: string };
  destRelPath: string;
  /** Whole transfer, headers and body. */
  timeoutMs: number;
  bindings: AssetBindingStore;
  /** Enables substitution: a file with the hash anywhere in the roots is bound instead of downloading. */
  hashCache?: ModelHashCache;
  /** What was asked for (a model name, say); defaults to the hash. */
  reference?: string;
  /** Recorded as `from_node`; defaults to `baseUrl`. */
  fromNode?: string;
  /** The configured node relationship (ASSET-3): when given, `baseUrl` must be one of these. */
  allowedBaseUrls?: readonly string[];
  fetchImpl?: typeof fetch;
}

export interface FetchAssetResult {
  result: Exclude<BindingResult, 'rejected'>;
  sha256: string;
  root: string;
  relPath: string;
  /** Absolute path of the bound file. */
  path: string;
  size: number;
  /** Bytes that came over the network (0 when substituted or already in place). */
  downloaded: number;
  bindingId: number;
}

/**
 * ASSET-2 client side: makes the file with `sha256` present at `destRelPath` in a local root, or binds a local file
 * that already has that hash. Downloads into a temp file next to the destination with a size limit, checks the
 * sha256 of what arrived, then renames into place. Every outcome is one `asset_bindings` row; a refusal is
 * recorded as `rejected` and thrown as an `AssetError`, and no partial file is left behind.
 */
export async function fetchAsset(opts: FetchAssetOptions): Promise<FetchAssetResult> {
  const reference = opts.reference ?? opts.sha256;
  const fromNode = opts.fromNode ?? opts.baseUrl;
  let destPath: string | null = null;
  try {
    const sha = normalizeSha256(opts.sha256);
    if (opts.allowedBaseUrls && !opts.allowedBaseUrls.map(normalizeUrl).includes(normalizeUrl(opts.baseUrl))) {
      throw new AssetError(
        'source_not_configured',
        `${opts.baseUrl} is not a configured node of this cluster`,
        'baseUrl',
      );
    }
    if (!(opts.maxBytes >= 0))
      throw new AssetError('asset_too_large', 'maxBytes must be a non-negative number', 'maxBytes');
    if (opts.expectedSize !== undefined && opts.expectedSize > opts.maxBytes)
      throw new AssetError(
        'asset_too_large',
        `asset is ${opts.expectedSize} bytes, the limit is ${opts.maxBytes}`,
        'expectedSize',
      );
    const { roots, root } = opts.destRoot;
    const dest = await roots.resolve(root, opts.destRelPath);
    destPath = dest.absPath;
    const done = (
      result: FetchAssetResult['result'],
      r: ResolvedPath,
      size: number,
      downloaded: number,
      reason: string | null,
    ): FetchAssetResult => {
      const row = opts.bindings.record({
        reference,
        sha256: sha,
        fromNode: downloaded ? fromNode : null,
        path: r.absPath,
        result,
        reason,
      });
      return {
        result,
        sha256: sha,
        root: r.root,
        relPath: r.relPath,
        path: r.absPath,
        size,
        downloaded,
        bindingId: row.id,
      };
    };
    const inPlace = await existingMatch(dest, sha, opts.hashCache);
    if (inPlace !== undefined) return done('bound', dest, inPlace, 0, 'already in place');
    if (opts.hashCache) {
      const local = await assetIndexFor(roots, opts.hashCache).find(sha);
      if (local) {
        const r = await roots.resolve(local.root, local.relPath);
        return done('substituted', r, local.size, 0, `same sha256 already at ${local.root}:${local.relPath}`);
      }
    }
    const received = await download(opts, sha, dest);
    return done('bound', received.dest, received.size, received.size, null);
  } catch (err) {
    const e = asAssetError(err, opts.timeoutMs);
    opts.bindings.record({
      reference,
      sha256: opts.sha256,
      fromNode,
      path: destPath,
      result: 'rejected',
      reason: `${e.code}: ${e.message}`,
    });
    throw e;
  }
}

/** The size of the destination when it already holds exactly this hash; `destination_exists` when it holds other bytes. */
async function existingMatch(dest: ResolvedPath, sha: string, cache?: ModelHashCache): Promise<number | undefined> {
  if (!dest.exists) return undefined;
  if (dest.kind !== 'file')
    throw new AssetError(
      'destination_exists',
      `'${dest.relPath}' in '${dest.root}' exists and is not a regular file`,
      'destRelPath',
    );
  const actual = cache ? await cache.hash(dest.absPath) : await sha256File(dest.absPath);
  if (actual !== sha)
    throw new AssetError(
      'destination_exists',
      `'${dest.relPath}' in '${dest.root}' exists with other content (sha256 ${actual})`,
      'destRelPath',
    );
  return (await stat(dest.absPath)).size;
}

async function download(
  opts: FetchAssetOptions,
  sha: string,
  dest: ResolvedPath,
): Promise<{ dest: ResolvedPath; size: number }> {
  const { roots, root } = opts.destRoot;
  await mkdir(dirname(dest.absPath), { recursive: true });
  // The folders may have just been created: check the place again before writing into it.
  const checked = await roots.resolve(root, dest.relPath);
  const temp = join(dirname(checked.absPath), `${PARTIAL_PREFIX}${randomUUID()}`);
  const abort = new AbortController();
  const signal = AbortSignal.any([abort.signal, AbortSignal.timeout(opts.timeoutMs)]);
  let fh: FileHandle | undefined;
  try {
    fh = await open(temp, 'wx', 0o644);
    const res = await (opts.fetchImpl ?? fetch)(assetByHashUrl(opts.baseUrl, sha), {
      headers: { authorization: `Bearer ${opts.token}` },
      signal,
    });
    if (!res.ok || !res.body) {
      const text = (await errorText(fetchAnswer(res))).slice(0, 300);
      throw new AssetError('transfer_refused', `${opts.baseUrl} answered ${res.status}${text ? `: ${text}` : ''}`);
    }
    const announced = Number(res.headers.get('content-length') ?? NaN);
    if (announced > opts.maxBytes) {
      abort.abort();
      throw new AssetError('asset_too_large', `asset is ${announced} bytes, the limit is ${opts.maxBytes}`);
    }
    const hash = createHash('sha256');
    let size = 0;
    const reader = res.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > opts.maxBytes)
          throw new AssetError('asset_too_large', `more than ${opts.maxBytes} bytes arrived; transfer cut`);
        if (opts.expectedSize !== undefined && size > opts.expectedSize)
          throw new AssetError('size_mismatch', `more than the expected ${opts.expectedSize} bytes arrived`);
        hash.update(value);
        for (let off = 0; off < value.byteLength; )
          off += (await fh.write(value, off, value.byteLength - off)).bytesWritten;
      }
    } catch (err) {
      abort.abort();
      await reader.cancel().catch(() => undefined);
      throw err;
    }
    if (opts.expectedSize !== undefined && size !== opts.expectedSize)
      throw new AssetError('size_mismatch', `${size} bytes arrived, expected ${opts.expectedSize}`);
    const got = hash.digest('hex');
    if (got !== sha) throw new AssetError('hash_mismatch', `what arrived has sha256 ${got}, expected ${sha}`);
    await fh.sync();
    await fh.close();
    fh = undefined;
    // Another transfer may have placed the same file meanwhile; other bytes under that name are never replaced.
    const final = await roots.resolve(root, dest.relPath);
    if ((await existingMatch(final, sha, opts.hashCache)) === undefined) await rename(temp, final.absPath);
    else await unlink(temp);
    return { dest: await roots.resolve(root, dest.relPath), size };
  } catch (err) {
    await fh?.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    throw err;
  }
}

function asAssetError(err: unknown, timeoutMs: number): AssetError {
  if (err instanceof AssetError) return err;
  const e = err as Error & { cause?: { code?: string; message?: string }; code?: string };
  if (e.name === 'TimeoutError')
    return new AssetError('transfer_timeout', `transfer did not finish within ${timeoutMs} ms`);
  if (e.name === 'AbortError') return new AssetError('transfer_failed', 'transfer aborted');
  if (e.name === 'TypeError' && e.cause)
    return new AssetError('transfer_failed', `transfer failed: ${e.cause.code ?? e.cause.message ?? e.message}`);
  return new AssetError('io_error', `asset transfer: ${e.code ? `${e.code} ` : ''}${e.message}`);
}

/**
 * A local file name for an asset: the last segment of a suggestion (a peer's file name is only a hint), reduced to
 * safe characters, or `<sha256 prefix>.bin`. Never a path.
 */
export function safeAssetFileName(suggested: string | null | undefined, sha256: string): string {
  const base = (suggested ?? '').split(/[\\/]/).pop() ?? '';
  const clean = base
    .replace(/[^A-Za-z0-9._+()-]+/g, '_')
    .replace(/^[._]+/, '')
    .slice(0, 120);
  return clean && clean !== '.' && clean !== '..' ? clean : `${sha256.slice(0, 16)}.bin`;
}
