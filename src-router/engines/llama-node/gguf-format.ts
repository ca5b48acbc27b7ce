/** Constants of the GGUF v3 container format shared by the writer and the reader. */

export const GGUF_MAGIC = 0x46554747; // "GGUF" read as a little-endian u32
export const GGUF_VERSION = 3;
export const GGUF_DEFAULT_ALIGNMENT = 32;

/** Metadata value type codes. */
export const GgufValueType = {
  u8: 0,
  i8: 1,
  u16: 2,
  i16: 3,
  u32: 4,
  i32: 5,
  f32: 6,
  bool: 7,
  string: 8,
  array: 9,
  u64: 10,
  i64: 11,
  f64: 12,
} as const;
export type GgufScalarTypeName = Exclude<keyof typeof GgufValueType, 'array'>;

/** A metadata value as read back: 64-bit integers beyond 2^53 stay bigint. */
export type GgufValue = number | bigint | boolean | string | GgufValue[];

/** The tensor element types this project writes, and a few common ones the reader can size. */
export const GgmlType = { f32: 0, f16: 1, q4_0: 2, q4_1: 3, q5_0: 6, q5_1: 7, q8_0: 8 } as const;
export type GgmlTypeName = keyof typeof GgmlType;

/** Elements per block and bytes per block of each known tensor type. */
export const GGML_BLOCK: Record<GgmlTypeName, { elements: number; bytes: number }> = {
  f32: { elements: 1, bytes: 4 },
  f16: { elements: 1, bytes: 2 },
  q4_0: { elements: 32, bytes: 18 },
  q4_1: { elements: 32, bytes: 20 },
  q5_0: { elements: 32, bytes: 22 },
  q5_1: { elements: 32, bytes: 24 },
  q8_0: { elements: 32, bytes: 34 },
};

export function ggmlTypeName(code: number): GgmlTypeName | undefined {
  for (const [name, value] of Object.entries(GgmlType)) if (value === code) return name as GgmlTypeName;
  return undefined;
}

/** Bytes of tensor data for `elements` values of a known type (elements must fill whole blocks). */
export function tensorByteSize(type: GgmlTypeName, elements: number): number {
  const block = GGML_BLOCK[type];
  if (elements % block.elements !== 0)
    throw new Error(`${elements} elements do not fill ${type} blocks of ${block.elements}`);
  return (elements / block.elements) * block.bytes;
}

export function alignUp(value: number, alignment: number): number {
  return Math.ceil(value / alignment) * alignment;
}
