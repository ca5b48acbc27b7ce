import type { ReadStream } from 'node:fs';
import { openRegularFile } from '../../config/regular-file';
import type { ModelHashCache } from '../../store';
import { type AssetIndex, assetIndexFor } from './asset-index';
import { AssetError, normalizeSha256 } from './errors';
import type { FileRoots } from './file-roots';

export {
  ASSET_BY_HASH_PATH,
  assetByHashUrl,
  type FetchAssetOptions,
  type FetchAssetResult,
  fetchAsset,
  safeAssetFileName,
} from './fetch-asset';

/** Reads are streamed in chunks of at most this many bytes. */
export const ASSET_CHUNK_BYTES = 1024 * 1024;

/** A byte range of a file, both ends inclusive (HTTP semantics). */
export interface ByteRange {
  start: number;
  end: number;
}

export interface AssetRead {
  sha256: string;
  root: string;
  relPath: string;
  /** Absolute path of the file served (never sent to the peer: it is a local detail). */
  path: string;
  size: number;
  mtimeMs: number;
  /**
   * The file, or one range of it, in chunks of `ASSET_CHUNK_BYTES`: opened once when asked (a regular file only: one
   * swapped for a FIFO since it was indexed is refused, never read), read through that handle, closed at its end.
   */
  stream(range?: ByteRange): Promise<ReadStream>;
}

/**
 * ASSET-2, server side: the file inside the roots whose verified sha256 is `sha256`. `invalid_hash` for a malformed
 * hash, `not_found` when no file in any root has it. The hash index is shared per (roots, cache) pair; pass `index`
 * to use another one.
 */
export async function openAssetRead(
  roots: FileRoots,
  hashCache: ModelHashCache,
  sha256: string,
  index: AssetIndex = assetIndexFor(roots, hashCache),
): Promise<AssetRead> {
  const sha = normalizeSha256(sha256);
  const found = await index.find(sha);
  if (!found) throw new AssetError('not_found', `no file with sha256 ${sha} in this node's file roots`, 'sha256');
  return {
    sha256: sha,
    root: found.root,
    relPath: found.relPath,
    path: found.absPath,
    size: found.size,
    mtimeMs: found.mtimeMs,
    async stream(range?: ByteRange) {
      const { handle } = await openRegularFile(found.absPath);
      return handle.createReadStream({
        start: range?.start ?? 0,
        end: range?.end,
        highWaterMark: ASSET_CHUNK_BYTES,
        autoClose: true,
      });
    },
  };
}

/**
 * An HTTP `Range` header (`bytes=N-`, `bytes=N-M`, `bytes=-K`) against a file size; undefined when absent.
 * One range only; anything unreadable or past the end is `range_not_satisfiable` (416).
 */
export function parseRangeHeader(header: string | undefined, size: number): ByteRange | undefined {
  if (header === undefined || header === '') return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  const bad = () =>
    new AssetError(
      'range_not_satisfiable',
      `range '${header.slice(0, 60)}' is not satisfiable for ${size} bytes`,
      'range',
    );
  if (!m || (m[1] === '' && m[2] === '')) throw bad();
  let start: number;
  let end: number;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) throw bad();
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (!Number.isSafeInteger(start) || start >= size || end < start) throw bad();
  return { start, end };
}

/** Status and headers for serving `asset` (whole, or `range` of it). */
export function assetResponseHead(
  asset: Pick<AssetRead, 'sha256' | 'size'>,
  range?: ByteRange,
): { status: 200 | 206; headers: Record<string, string> } {
  const headers: Record<string, string> = {
    'content-type': 'application/octet-stream',
    'accept-ranges': 'bytes',
    'x-asset-sha256': asset.sha256,
    'cache-control': 'no-store',
  };
  if (!range) return { status: 200, headers: { ...headers, 'content-length': String(asset.size) } };
  return {
    status: 206,
    headers: {
      ...headers,
      'content-length': String(range.end - range.start + 1),
      'content-range': `bytes ${range.start}-${range.end}/${asset.size}`,
    },
  };
}
