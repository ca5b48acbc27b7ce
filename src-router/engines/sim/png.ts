import { deflateSync } from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** Largest side the sim draws; bigger requests are refused (memory, not realism). */
export const MAX_IMAGE_SIDE = 4096;

/**
 * A valid 8-bit RGB PNG of the given size: horizontal colour bands derived from `seed`.
 * Rows are uniform, so it deflates to a few kilobytes even at 1024×1024.
 */
export function encodePng(width: number, height: number, seed = 0): Buffer {
  if (
    !Number.isInteger(width) ||
    !Number.isInteger(height) ||
    width < 1 ||
    height < 1 ||
    width > MAX_IMAGE_SIDE ||
    height > MAX_IMAGE_SIDE
  ) {
    throw new RangeError(`image size ${width}x${height} out of range 1..${MAX_IMAGE_SIDE}`);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type: RGB
  ihdr[10] = 0; // compression
  ihdr[11] = 0; // filter
  ihdr[12] = 0; // no interlace
  const stride = 1 + width * 3;
  const raw = Buffer.alloc(stride * height);
  const band = Math.max(1, Math.ceil(height / 8));
  for (let y = 0; y < height; y++) {
    const b = Math.floor(y / band);
    const r = (seed >>> 0) + b * 40;
    const g = (seed >>> 8) + b * 70;
    const bl = (seed >>> 16) + b * 100;
    const row = y * stride;
    raw[row] = 0; // filter: none
    for (let x = 0; x < width; x++) {
      const p = row + 1 + x * 3;
      raw[p] = r & 0xff;
      raw[p + 1] = g & 0xff;
      raw[p + 2] = bl & 0xff;
    }
  }
  return Buffer.concat([
    SIGNATURE,
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(raw)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** Parses "WxH" (e.g. "512x512"); undefined when malformed or out of range. */
export function parseImageSize(
  size: unknown,
  fallback = { width: 512, height: 512 },
): { width: number; height: number } | undefined {
  if (size === undefined || size === null || size === '') return fallback;
  const m = typeof size === 'string' ? /^\s*(\d+)\s*[xX×]\s*(\d+)\s*$/.exec(size) : null;
  if (!m) return undefined;
  const width = Number(m[1]);
  const height = Number(m[2]);
  if (width < 1 || height < 1 || width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE) return undefined;
  return { width, height };
}
