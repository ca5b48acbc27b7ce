/** Reads the header of a GGUF file (v2 or v3): metadata and tensor infos, never the tensor data. */
import { type FileHandle, open } from 'node:fs/promises';
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

const CHUNK = 1 << 16;
const MAX_STRING = 1 << 26;
const MAX_COUNT = 1 << 26;

/** Reads a file front to back through a growing buffer. */
class Cursor {
  private buf = Buffer.alloc(0);
  private bufStart = 0;
  pos = 0;
  constructor(
    private readonly file: FileHandle,
    readonly size: number,
    private readonly maxBytes = Infinity,
  ) {}

  private async need(n: number): Promise<Buffer> {
    const end = this.pos + n;
    if (end > this.size) throw new Error(`truncated GGUF: needs byte ${end}, file has ${this.size}`);
    if (end > this.maxBytes) throw new GgufHeaderTooLarge(this.maxBytes);
    if (end > this.bufStart + this.buf.length) {
      const keep = this.buf.subarray(this.pos - this.bufStart);
      const want = Math.max(CHUNK, n - keep.length);
      const more = Buffer.alloc(Math.min(want, this.size - this.bufStart - this.buf.length));
      const { bytesRead } = await this.file.read(more, 0, more.length, this.bufStart + this.buf.length);
      this.buf = Buffer.concat([keep, more.subarray(0, bytesRead)]);
      this.bufStart = this.pos;
    }
    const at = this.pos - this.bufStart;
    this.pos = end;
    return this.buf.subarray(at, at + n);
  }

  /** Moves past `n` bytes without reading them. */
  skip(n: number): void {
    const end = this.pos + n;
    if (end > this.size) throw new Error(`truncated GGUF: needs byte ${end}, file has ${this.size}`);
    if (end > this.maxBytes) throw new GgufHeaderTooLarge(this.maxBytes);
    if (end > this.bufStart + this.buf.length) {
      this.buf = Buffer.alloc(0);
      this.bufStart = end;
    }
    this.pos = end;
  }

  async u8() {
    return (await this.need(1)).readUInt8(0);
  }
  async i8() {
    return (await this.need(1)).readInt8(0);
  }
  async u16() {
    return (await this.need(2)).readUInt16LE(0);
  }
  async i16() {
    return (await this.need(2)).readInt16LE(0);
  }
  async u32() {
    return (await this.need(4)).readUInt32LE(0);
  }
  async i32() {
    return (await this.need(4)).readInt32LE(0);
  }
  async f32() {
    return (await this.need(4)).readFloatLE(0);
  }
  async f64() {
    return (await this.need(8)).readDoubleLE(0);
  }
  async u64(): Promise<number | bigint> {
    return narrow((await this.need(8)).readBigUInt64LE(0));
  }
  async i64(): Promise<number | bigint> {
    return narrow((await this.need(8)).readBigInt64LE(0));
  }
  async count(what: string): Promise<number> {
    const v = await this.u64();
    if (typeof v !== 'number' || v > MAX_COUNT) throw new Error(`implausible ${what}: ${v}`);
    return v;
  }
  async str(): Promise<string> {
    const n = await this.u64();
    if (typeof n !== 'number' || n > MAX_STRING) throw new Error(`implausible string length ${n}`);
    return (await this.need(n)).toString('utf8');
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

/** Moves past one array's items without keeping them (a tokenizer's vocabulary, say). */
async function skipArray(c: Cursor, itemType: number, n: number): Promise<void> {
  const fixed = FIXED_SIZE[itemType];
  if (fixed !== undefined) return c.skip(n * fixed);
  for (let i = 0; i < n; i++) {
    if (itemType === GgufValueType.string) {
      const len = await c.u64();
      if (typeof len !== 'number' || len > MAX_STRING) throw new Error(`implausible string length ${len}`);
      c.skip(len);
    } else if (itemType === GgufValueType.array) await skipArray(c, await c.u32(), await c.count('array length'));
    else throw new Error(`unknown GGUF value type ${itemType} at byte ${c.pos}`);
  }
}

async function readValue(c: Cursor, type: number, skipArrays = false): Promise<GgufValue> {
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
      return (await c.u8()) !== 0;
    case GgufValueType.string:
      return c.str();
    case GgufValueType.array: {
      const itemType = await c.u32();
      const n = await c.count('array length');
      if (skipArrays) {
        await skipArray(c, itemType, n);
        return [];
      }
      const items: GgufValue[] = new Array(n);
      for (let i = 0; i < n; i++) items[i] = await readValue(c, itemType);
      return items;
    }
    default:
      throw new Error(`unknown GGUF value type ${type} at byte ${c.pos}`);
  }
}

function toCount(v: number | bigint, what: string): number {
  if (typeof v !== 'number' || v < 0) throw new Error(`implausible ${what}: ${v}`);
  return v;
}

/** The header runs past the bound a reader set (`ReadHeaderOptions.maxBytes`). */
export class GgufHeaderTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`the GGUF header is larger than ${maxBytes} bytes`);
  }
}

export interface ReadHeaderOptions {
  /** Read no byte past this offset (GgufHeaderTooLarge instead); default: the whole header. */
  maxBytes?: number;
  /** Stop after the metadata: `tensors` is empty and `dataOffset` 0. Default false. */
  metadataOnly?: boolean;
  /** Array values (vocabularies, merges) are moved past and read as empty arrays. Default false. */
  skipArrays?: boolean;
  /** More metadata keys than this is an error (a real model has a few dozen). Default: no limit but the format's. */
  maxMetadataKeys?: number;
}

export async function readGgufHeader(path: string, opts: ReadHeaderOptions = {}): Promise<GgufHeader> {
  const file = await open(path, 'r');
  try {
    const { size } = await file.stat();
    const c = new Cursor(file, size, opts.maxBytes);
    const magic = await c.u32();
    if (magic !== GGUF_MAGIC) throw new Error(`${path} is not a GGUF file (magic 0x${magic.toString(16)})`);
    const version = await c.u32();
    if (version < 2 || version > 3) throw new Error(`unsupported GGUF version ${version}`);
    const tensorCount = await c.count('tensor count');
    const kvCount = await c.count('metadata count');
    if (opts.maxMetadataKeys !== undefined && kvCount > opts.maxMetadataKeys)
      throw new Error(`implausible metadata count: ${kvCount} keys`);
    const metadata = new Map<string, GgufValue>();
    for (let i = 0; i < kvCount; i++) {
      const key = await c.str();
      metadata.set(key, await readValue(c, await c.u32(), opts.skipArrays));
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
      const name = await c.str();
      const nDims = await c.u32();
      if (nDims > 8) throw new Error(`tensor ${name} has ${nDims} dimensions`);
      const dims: number[] = [];
      for (let d = 0; d < nDims; d++) dims.push(toCount(await c.u64(), `dimension of ${name}`));
      const type = await c.u32();
      const offset = toCount(await c.u64(), `offset of ${name}`);
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
      dataOffset: alignUp(c.pos, alignment),
      fileSize: size,
    };
  } finally {
    await file.close();
  }
}
