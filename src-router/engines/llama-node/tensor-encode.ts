/** Seeded random numbers and the f32 / f16 / q8_0 encodings of tensor data. */
import { tensorByteSize } from './gguf-format';

export type WeightType = 'f32' | 'f16' | 'q8_0';

const f32Scratch = new Float32Array(1);
const u32Scratch = new Uint32Array(f32Scratch.buffer);

/** IEEE 754 binary16 bits of a number, rounded to nearest even, with subnormals. */
export function toHalfBits(value: number): number {
  f32Scratch[0] = value;
  const bits = u32Scratch[0];
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  let mant = bits & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let half = mant >>> shift;
    const rest = mant & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (rest > halfway || (rest === halfway && half & 1)) half++;
    return sign | half;
  }
  let half = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && half & 1)) half++; // a carry into the exponent is the right result
  return sign | half;
}

/** The number a binary16 bit pattern stands for. */
export function fromHalfBits(half: number): number {
  const sign = half & 0x8000 ? -1 : 1;
  const exp = (half >>> 10) & 0x1f;
  const mant = half & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? Number.NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** Encodes f32 values as tensor data of the given type. q8_0: blocks of 32 as an f16 scale + 32 int8. */
export function encodeTensor(values: Float32Array, type: WeightType): Buffer {
  if (type === 'f32') return Buffer.from(values.buffer, values.byteOffset, values.byteLength);
  const out = Buffer.alloc(tensorByteSize(type, values.length));
  if (type === 'f16') {
    for (let i = 0; i < values.length; i++) out.writeUInt16LE(toHalfBits(values[i]), i * 2);
    return out;
  }
  for (let block = 0; block < values.length / 32; block++) {
    const base = block * 32;
    let amax = 0;
    for (let j = 0; j < 32; j++) amax = Math.max(amax, Math.abs(values[base + j]));
    const scale = amax / 127;
    const inverse = scale ? 1 / scale : 0;
    out.writeUInt16LE(toHalfBits(scale), block * 34);
    for (let j = 0; j < 32; j++) out.writeInt8(Math.round(values[base + j] * inverse), block * 34 + 2 + j);
  }
  return out;
}
