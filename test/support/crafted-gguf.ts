/**
 * GGUF files written byte by byte for tests of the header reader's limits: whatever counts, lengths and nesting a
 * test asks for, true or not (a declared length need not be followed by that many bytes).
 */
export class GgufBytes {
  private readonly parts: Buffer[] = [];

  /** The magic, version 3, the tensor count and the metadata count as declared. */
  constructor(keys: number | bigint, tensors: number | bigint = 0) {
    this.u32(0x46554747).u32(3).u64(tensors).u64(keys);
  }

  u32(n: number): this {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n);
    this.parts.push(b);
    return this;
  }

  u64(n: number | bigint): this {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(n));
    this.parts.push(b);
    return this;
  }

  str(s: string): this {
    this.u64(Buffer.byteLength(s));
    this.parts.push(Buffer.from(s));
    return this;
  }

  raw(b: Buffer): this {
    this.parts.push(b);
    return this;
  }

  /** A key with a u32 value. */
  keyU32(key: string, v: number): this {
    return this.str(key).u32(4).u32(v);
  }

  /** A key with a string value. */
  keyStr(key: string, v: string): this {
    return this.str(key).u32(8).str(v);
  }

  /** A key with an array of `n` strings of `len` bytes each (built in one buffer: millions of items are fast). */
  keyStrings(key: string, n: number, len: number): this {
    this.str(key).u32(9).u32(8).u64(n);
    const item = Buffer.alloc(8 + len, 'x');
    item.writeBigUInt64LE(BigInt(len));
    const all = Buffer.alloc(n * item.length);
    for (let i = 0; i < n; i++) item.copy(all, i * item.length);
    return this.raw(all);
  }

  bytes(): Buffer {
    return Buffer.concat(this.parts);
  }
}

/**
 * A header of about `mib` MiB that stays within every count and length limit: arrays of 2^20 items, 8-byte strings
 * (the first one the vocabulary, the key a summary keeps to find its end-of-sequence token) or u8 numbers.
 */
export function bigHeaderGguf(mib: number, items: 'strings' | 'bytes' = 'strings'): Buffer {
  const perArray = 1 << 20;
  const itemBytes = items === 'strings' ? 16 : 1;
  const arrays = Math.ceil((mib * 1024 * 1024) / (perArray * itemBytes));
  const g = new GgufBytes(arrays + 1).keyStr('general.architecture', 'llama');
  for (let i = 0; i < arrays; i++) {
    if (items === 'strings') g.keyStrings(i === 0 ? 'tokenizer.ggml.tokens' : `x.filler_${i}`, perArray, 8);
    else g.str(`x.bytes_${i}`).u32(9).u32(0).u64(perArray).raw(Buffer.alloc(perArray, 7));
  }
  return g.bytes();
}

/** An array whose declared length is 2^40 items. */
export const hugeArrayGguf = () =>
  new GgufBytes(1)
    .str('tokenizer.ggml.tokens')
    .u32(9)
    .u32(4)
    .u64(2n ** 40n)
    .bytes();

/** A string value whose declared length is 2^50 bytes. */
export const hugeStringGguf = () =>
  new GgufBytes(1)
    .str('general.name')
    .u32(8)
    .u64(2n ** 50n)
    .bytes();

/** Arrays inside arrays, `depth` deep, each holding one array (the last one empty u32s). */
export function deepGguf(depth: number): Buffer {
  const g = new GgufBytes(1).str('x.deep');
  g.u32(9);
  for (let i = 1; i < depth; i++) g.u32(9).u64(1);
  return g.u32(4).u64(0).bytes();
}

/** A metadata count of 2^33 keys (the file holds one). */
export const manyKeysGguf = () => new GgufBytes(2n ** 33n).keyU32('x.one', 1).bytes();
