/** Reads the header of a GGUF file (v2 or v3): metadata and tensor infos, never the tensor data. */
import type { FileHandle } from 'node:fs/promises';
import { openRegularFile } from '../../config/regular-file';
import {
  alignUp,
  GGML_BLOCK,
  GGUF_DEFAULT_ALIGNMENT,
  GGUF_MAGIC,
  type GgmlTypeName,
  type GgufValue,
  GgufValueType,
  ggmlTypeName,
} from './gguf-format';

export interface GgufTensorInfo {
  name: string;
  /** ggml order: ne0 (row length) first */
  dims: number[];
  /** ggml type code */
  type: number;
  /** name of the type when it is one the reader knows */
  typeName: GgmlTypeName | undefined;
  /** offset from the start of the data section */
  offset: number;
  /** bytes of data, when the type is known */
  bytes: number | undefined;
}

export interface GgufHeader {
  version: number;
  tensorCount: number;
  metadata: Map<string, GgufValue>;
  tensors: GgufTensorInfo[];
  alignment: number;
  /** absolute file offset where tensor data begins */
  dataOffset: number;
  fileSize: number;
}

/** Bytes read from the file at once (the parse runs without awaiting inside a chunk). */
const CHUNK = 1 << 20;

/**
 * What one header read may cost, whoever reads it: a file is data anyone who can write a model folder shapes, so
 * every count, length and depth in it is checked against these before it is believed. Real models stay far below
 * them (a vocabulary of 262,144 tokens and 446,189 merges is under 16 MiB and 900,000 items).
 */
export interface GgufLimits {
  /** Bytes of the file read (or moved past) before the header ends. */
  headerBytes: number;
  /** Bytes of one string (a key, a chat template, one token). */
  stringBytes: number;
  /** Items of one array. */
  arrayLength: number;
  /** Metadata keys. */
  keys: number;
  /** Tensor infos. */
  tensors: number;
  /** Arrays inside arrays: 1 is a flat array. */
  depth: number;
  /** Array items kept in memory, all arrays together (moved-past ones do not count). */
  itemsKept: number;
}

export const GGUF_LIMITS: GgufLimits = {
  headerBytes: 32 * 1024 * 1024,
  stringBytes: 1024 * 1024,
  arrayLength: 1 << 20,
  keys: 4096,
  tensors: 1 << 16,
  depth: 2,
  itemsKept: 1 << 21,
};

const LIMIT_WHAT: Record<keyof GgufLimits, (n: number) => string> = {
  headerBytes: (n) => `${mib(n)} MiB of header`,
  stringBytes: (n) => `${mib(n)} MiB in one string`,
  arrayLength: (n) => `${n.toLocaleString('en-US')} items in one array`,
  keys: (n) => `${n.toLocaleString('en-US')} metadata keys`,
  tensors: (n) => `${n.toLocaleString('en-US')} tensors`,
  depth: (n) => `arrays nested ${n} deep`,
  itemsKept: (n) => `${n.toLocaleString('en-US')} array items kept`,
};

const mib = (n: number) => Math.round((n / 1024 / 1024) * 100) / 100;

/** The header goes past one of the reader's limits: `limit` names which, `max` its value. */
export class GgufLimitExceeded extends Error {
  constructor(
    readonly limit: keyof GgufLimits,
    readonly max: number,
    detail: string,
  ) {
    super(`the GGUF header goes past the limit of ${LIMIT_WHAT[limit](max)}: ${detail}`);
  }
}

/**
 * Reads a file front to back through one buffer of about `CHUNK` bytes. The typed reads are synchronous: a caller
 * makes sure the bytes are there first (`has`, else `await fill`), so a header of millions of items costs a few
 * dozen awaits, not millions.
 */
class Cursor {
  private buf = Buffer.alloc(0);
  private at = 0;
  private bufStart = 0;
  constructor(
    private readonly file: FileHandle,
    readonly size: number,
    private readonly maxBytes: number,
  ) {}

  get pos(): number {
    return this.bufStart + this.at;
  }

  has(n: number): boolean {
    return this.at + n <= this.buf.length;
  }

  private check(end: number): void {
    if (end > this.maxBytes)
      throw new GgufLimitExceeded('headerBytes', this.maxBytes, `it needs byte ${end.toLocaleString('en-US')}`);
    if (end > this.size) throw new Error(`truncated GGUF: needs byte ${end}, file has ${this.size}`);
  }

  /** Makes the next `n` bytes readable (reads what is missing, at least a chunk). */
  async fill(n: number): Promise<void> {
    const pos = this.pos;
    this.check(pos + n);
    const keep = this.buf.subarray(this.at);
    const want = Math.max(n, Math.min(CHUNK, this.size - pos, this.maxBytes - pos));
    const buf = Buffer.allocUnsafe(want);
    keep.copy(buf, 0);
    let got = keep.length;
    while (got < want) {
      const { bytesRead } = await this.file.read(buf, got, want - got, pos + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    if (got < n) throw new Error(`truncated GGUF: needs byte ${pos + n}, read ${pos + got}`);
    this.buf = buf.subarray(0, got);
    this.bufStart = pos;
    this.at = 0;
  }

  /** Moves past `n` bytes without reading them. */
  skip(n: number): void {
    const end = this.pos + n;
    this.check(end);
    if (this.at + n <= this.buf.length) this.at += n;
    else {
      this.buf = Buffer.alloc(0);
      this.bufStart = end;
      this.at = 0;
    }
  }

  u8(): number {
    return this.buf.readUInt8(this.at++);
  }
  i8(): number {
    return this.buf.readInt8(this.at++);
  }
  u16(): number {
    const v = this.buf.readUInt16LE(this.at);
    this.at += 2;
    return v;
  }
  i16(): number {
    const v = this.buf.readInt16LE(this.at);
    this.at += 2;
    return v;
  }
  u32(): number {
    const v = this.buf.readUInt32LE(this.at);
    this.at += 4;
    return v;
  }
  i32(): number {
    const v = this.buf.readInt32LE(this.at);
    this.at += 4;
    return v;
  }
  f32(): number {
    const v = this.buf.readFloatLE(this.at);
    this.at += 4;
    return v;
  }
  f64(): number {
    const v = this.buf.readDoubleLE(this.at);
    this.at += 8;
    return v;
  }
  u64(): number | bigint {
    const v = this.buf.readBigUInt64LE(this.at);
    this.at += 8;
    return narrow(v);
  }
  i64(): number | bigint {
    const v = this.buf.readBigInt64LE(this.at);
    this.at += 8;
    return narrow(v);
  }
  /** A u64 count or length, as a number (one past 2^53 is reported as such). */
  size64(): number {
    const lo = this.buf.readUInt32LE(this.at);
    const hi = this.buf.readUInt32LE(this.at + 4);
    this.at += 8;
    return hi * 2 ** 32 + lo;
  }
  text(n: number): string {
    const s = this.buf.toString('utf8', this.at, this.at + n);
    this.at += n;
    return s;
  }
}

function narrow(v: bigint): number | bigint {
  return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v;
}

/** Bytes of a fixed-size GGUF value type; undefined for strings and arrays. */
const FIXED_SIZE: Partial<Record<number, number>> = {
  [GgufValueType.u8]: 1,
  [GgufValueType.i8]: 1,
  [GgufValueType.bool]: 1,
  [GgufValueType.u16]: 2,
  [GgufValueType.i16]: 2,
  [GgufValueType.u32]: 4,
  [GgufValueType.i32]: 4,
  [GgufValueType.f32]: 4,
  [GgufValueType.u64]: 8,
  [GgufValueType.i64]: 8,
  [GgufValueType.f64]: 8,
};

/** One header read: the cursor, the limits, and what has been kept so far. */
class HeaderParse {
  kept = 0;
  constructor(
    readonly c: Cursor,
    readonly limits: GgufLimits,
  ) {}

  private async need(n: number): Promise<void> {
    if (!this.c.has(n)) await this.c.fill(n);
  }

  async u32(): Promise<number> {
    await this.need(4);
    return this.c.u32();
  }

  /** A u64 that must be a safe integer (a dimension, an offset). */
  async size64(what: string): Promise<number> {
    await this.need(8);
    const n = this.c.size64();
    if (!Number.isSafeInteger(n)) throw new Error(`implausible ${what}: ${n}`);
    return n;
  }

  /** A u64 count checked against `max` (the limit `limit` names). */
  async count(limit: 'arrayLength' | 'keys' | 'tensors', what: string): Promise<number> {
    await this.need(8);
    const n = this.c.size64();
    const max = this.limits[limit];
    if (n > max) throw new GgufLimitExceeded(limit, max, `${what} has ${n.toLocaleString('en-US')}`);
    return n;
  }

  async strLength(what: string): Promise<number> {
    await this.need(8);
    const n = this.c.size64();
    const max = this.limits.stringBytes;
    if (n > max) throw new GgufLimitExceeded('stringBytes', max, `${what} is ${n.toLocaleString('en-US')} bytes`);
    return n;
  }

  async str(what: string): Promise<string> {
    const n = await this.strLength(what);
    await this.need(n);
    return this.c.text(n);
  }

  /** A scalar of a fixed-size type (the bytes are there: `need` was called). */
  private scalar(type: number): GgufValue {
    const c = this.c;
    switch (type) {
      case GgufValueType.u8:
        return c.u8();
      case GgufValueType.i8:
        return c.i8();
      case GgufValueType.u16:
        return c.u16();
      case GgufValueType.i16:
        return c.i16();
      case GgufValueType.u32:
        return c.u32();
      case GgufValueType.i32:
        return c.i32();
      case GgufValueType.f32:
        return c.f32();
      case GgufValueType.f64:
        return c.f64();
      case GgufValueType.u64:
        return c.u64();
      case GgufValueType.i64:
        return c.i64();
      case GgufValueType.bool:
        return c.u8() !== 0;
      default:
        throw new Error(`unknown GGUF value type ${type} at byte ${c.pos}`);
    }
  }

  /** One value of `key`; `keep(length)` says whether an array of that length is kept (else moved past, read as []). */
  async value(type: number, key: string, depth: number, keep: (length: number) => boolean): Promise<GgufValue> {
    const fixed = FIXED_SIZE[type];
    if (fixed !== undefined) {
      await this.need(fixed);
      return this.scalar(type);
    }
    if (type === GgufValueType.string) return this.str(`a string of ${key}`);
    if (type !== GgufValueType.array) throw new Error(`unknown GGUF value type ${type} at byte ${this.c.pos}`);
    if (depth + 1 > this.limits.depth)
      throw new GgufLimitExceeded('depth', this.limits.depth, `${key} holds arrays ${depth + 1} deep`);
    const itemType = await this.u32();
    const n = await this.count('arrayLength', `an array of ${key}`);
    if (!keep(n)) {
      await this.skipItems(itemType, n, key, depth + 1);
      return [];
    }
    this.kept += n;
    if (this.kept > this.limits.itemsKept)
      throw new GgufLimitExceeded('itemsKept', this.limits.itemsKept, `${key} brings them to ${this.kept}`);
    const items: GgufValue[] = [];
    const itemFixed = FIXED_SIZE[itemType];
    const c = this.c;
    for (let i = 0; i < n; i++) {
      if (itemFixed !== undefined) {
        if (!c.has(itemFixed)) await c.fill(itemFixed);
        items.push(this.scalar(itemType));
      } else if (itemType === GgufValueType.string) {
        // Inline, without an await per item unless the buffer runs out: vocabularies hold 100,000s of strings.
        if (!c.has(8)) await c.fill(8);
        const len = c.size64();
        if (len > this.limits.stringBytes)
          throw new GgufLimitExceeded('stringBytes', this.limits.stringBytes, `a string of ${key} is ${len} bytes`);
        if (!c.has(len)) await c.fill(len);
        items.push(c.text(len));
      } else items.push(await this.value(itemType, key, depth + 1, keep));
    }
    return items;
  }

  /** Moves past `n` items of `itemType` without keeping them (a tokenizer's vocabulary, say). */
  private async skipItems(itemType: number, n: number, key: string, depth: number): Promise<void> {
    const fixed = FIXED_SIZE[itemType];
    if (fixed !== undefined) return this.c.skip(n * fixed);
    const max = this.limits.stringBytes;
    for (let i = 0; i < n; i++) {
      if (itemType === GgufValueType.string) {
        if (!this.c.has(8)) await this.c.fill(8);
        const len = this.c.size64();
        if (len > max) throw new GgufLimitExceeded('stringBytes', max, `a string of ${key} is ${len} bytes`);
        this.c.skip(len);
      } else if (itemType === GgufValueType.array) {
        if (depth + 1 > this.limits.depth)
          throw new GgufLimitExceeded('depth', this.limits.depth, `${key} holds arrays ${depth + 1} deep`);
        const inner = await this.u32();
        await this.skipItems(inner, await this.count('arrayLength', `an array of ${key}`), key, depth + 1);
      } else throw new Error(`unknown GGUF value type ${itemType} at byte ${this.c.pos}`);
    }
  }
}

export interface ReadHeaderOptions {
  /** Stop after the metadata: `tensors` is empty and `dataOffset` 0. Default false. */
  metadataOnly?: boolean;
  /**
   * Whether an array of `key` with `length` items is kept; one that is not is moved past and read as `[]`. Default:
   * every array is kept (within `limits.itemsKept`).
   */
  keepArray?: (key: string, length: number) => boolean;
  /** Default GGUF_LIMITS; a test may set smaller ones. */
  limits?: GgufLimits;
}

/**
 * Reads the header of a GGUF file (v2 or v3) within `GGUF_LIMITS`: metadata and tensor infos, never the tensor
 * data. The path is opened once (`openRegularFile`: a FIFO or a device is refused, never read), and the header is
 * read through that handle. A header past a limit is `GgufLimitExceeded`.
 */
export async function readGgufHeader(path: string, opts: ReadHeaderOptions = {}): Promise<GgufHeader> {
  const { handle } = await openRegularFile(path);
  try {
    return await readGgufHeaderFrom(handle, path, opts);
  } finally {
    await handle.close();
  }
}

/** Reads the header through an open file (see `readGgufHeader`); `path` only names it in errors. */
export async function readGgufHeaderFrom(
  file: FileHandle,
  path: string,
  opts: ReadHeaderOptions = {},
): Promise<GgufHeader> {
  const limits = opts.limits ?? GGUF_LIMITS;
  const { size } = await file.stat();
  const p = new HeaderParse(new Cursor(file, size, limits.headerBytes), limits);
  const magic = await p.u32();
  if (magic !== GGUF_MAGIC) throw new Error(`${path} is not a GGUF file (magic 0x${magic.toString(16)})`);
  const version = await p.u32();
  if (version < 2 || version > 3) throw new Error(`unsupported GGUF version ${version}`);
  const tensorCount = await p.count('tensors', 'the tensor count');
  const kvCount = await p.count('keys', 'the metadata');
  const metadata = new Map<string, GgufValue>();
  const keepArray = opts.keepArray;
  for (let i = 0; i < kvCount; i++) {
    const key = await p.str('a metadata key');
    const keep = keepArray ? (n: number) => keepArray(key, n) : () => true;
    metadata.set(key, await p.value(await p.u32(), key, 0, keep));
  }
  const tensors: GgufTensorInfo[] = [];
  if (opts.metadataOnly)
    return {
      version,
      tensorCount,
      metadata,
      tensors,
      alignment: GGUF_DEFAULT_ALIGNMENT,
      dataOffset: 0,
      fileSize: size,
    };
  for (let i = 0; i < tensorCount; i++) {
    const name = await p.str('a tensor name');
    const nDims = await p.u32();
    if (nDims > 8) throw new Error(`tensor ${name} has ${nDims} dimensions`);
    const dims: number[] = [];
    for (let d = 0; d < nDims; d++) dims.push(await p.size64(`dimension of ${name}`));
    const type = await p.u32();
    const offset = await p.size64(`offset of ${name}`);
    const typeName = ggmlTypeName(type);
    const elements = dims.reduce((a, b) => a * b, 1);
    const bytes = typeName ? (elements / GGML_BLOCK[typeName].elements) * GGML_BLOCK[typeName].bytes : undefined;
    tensors.push({ name, dims, type, typeName, offset, bytes });
  }
  const declared = metadata.get('general.alignment');
  const alignment = typeof declared === 'number' && declared > 0 ? declared : GGUF_DEFAULT_ALIGNMENT;
  return {
    version,
    tensorCount,
    metadata,
    tensors,
    alignment,
    dataOffset: alignUp(p.c.pos, alignment),
    fileSize: size,
  };
}
