/**
 * Writes tiny GGUF v3 "llama" models with seeded random weights: real files that llama.cpp loads and runs,
 * with per-token costs that grow with their size. Deterministic for a given seed and shape.
 */
import { open } from 'node:fs/promises';
import { seededRandom } from '../../seeded-random';
import {
  alignUp,
  GGUF_DEFAULT_ALIGNMENT,
  GGUF_MAGIC,
  GGUF_VERSION,
  GgmlType,
  type GgufScalarTypeName,
  GgufValueType,
  tensorByteSize,
} from './gguf-format';
import { encodeTensor, type WeightType } from './tensor-encode';
import { buildTinyVocab, CHATML_TEMPLATE } from './tiny-vocab';

export type { WeightType } from './tensor-encode';
export const WEIGHT_TYPES: readonly WeightType[] = ['f32', 'f16', 'q8_0'];

export interface TinyLlamaOptions {
  /** embedding length (hidden size) */
  embd: number;
  layers: number;
  /** attention heads; default 4 (or fewer when embd is small) */
  heads?: number;
  /** key/value heads (grouped-query attention); default = heads */
  kvHeads?: number;
  /** feed-forward length; default ≈ 8/3·embd rounded up to 32 */
  ff?: number;
  /** trained context length written into the metadata; default 2048 */
  ctx?: number;
  type: WeightType;
  seed: number;
}

export interface TinyLlamaShape {
  embd: number;
  layers: number;
  heads: number;
  kvHeads: number;
  ff: number;
  ctx: number;
  type: WeightType;
  seed: number;
  vocab: number;
}

export interface TinyLlamaWriteResult extends TinyLlamaShape {
  path: string;
  name: string;
  tensors: number;
  params: number;
  bytes: number;
}

type Kv =
  | { key: string; type: GgufScalarTypeName; value: number | boolean | string }
  | { key: string; type: 'array'; itemType: GgufScalarTypeName; values: readonly (number | string)[] };

interface TensorPlan {
  name: string;
  dims: number[]; // ggml order: ne0 (row length) first
  kind: 'norm' | 'weight';
  type: WeightType;
  offset: number;
  bytes: number;
}

const FILE_TYPE: Record<WeightType, number> = { f32: 0, f16: 1, q8_0: 7 };

/** Checks the options and fills in defaults; throws a RangeError that names the bad option. */
export function resolveTinyLlamaShape(options: TinyLlamaOptions): TinyLlamaShape {
  const int = (name: string, value: number, min: number, max = 1 << 20) => {
    if (!Number.isInteger(value) || value < min || value > max)
      throw new RangeError(`${name} must be an integer in [${min}, ${max}], got ${value}`);
    return value;
  };
  if (!WEIGHT_TYPES.includes(options.type))
    throw new RangeError(`type must be one of ${WEIGHT_TYPES.join(', ')}, got ${String(options.type)}`);
  const embd = int('embd', options.embd, 8, 16384);
  const layers = int('layers', options.layers, 1, 256);
  const heads = int('heads', options.heads ?? Math.min(4, Math.max(1, Math.floor(embd / 16))), 1, embd);
  const kvHeads = int('kvHeads', options.kvHeads ?? heads, 1, heads);
  const ff = int('ff', options.ff ?? alignUp((embd * 8) / 3, 32), 1, 1 << 18);
  const ctx = int('ctx', options.ctx ?? 2048, 8, 1 << 20);
  const seed = int('seed', options.seed, 0, 0xffffffff);
  if (embd % heads !== 0) throw new RangeError(`embd (${embd}) must be a multiple of heads (${heads})`);
  if ((embd / heads) % 2 !== 0) throw new RangeError(`embd / heads (${embd / heads}) must be even for RoPE`);
  if (heads % kvHeads !== 0) throw new RangeError(`heads (${heads}) must be a multiple of kvHeads (${kvHeads})`);
  if (options.type === 'q8_0' && (embd % 32 !== 0 || ff % 32 !== 0))
    throw new RangeError(`q8_0 needs embd and ff to be multiples of 32 (embd ${embd}, ff ${ff})`);
  return { embd, layers, heads, kvHeads, ff, ctx, type: options.type, seed, vocab: buildTinyVocab().tokens.length };
}

function planTensors(shape: TinyLlamaShape): TensorPlan[] {
  const { embd, ff, vocab } = shape;
  const headDim = embd / shape.heads;
  const kvDim = headDim * shape.kvHeads;
  const specs: Array<[string, number[]]> = [
    ['token_embd.weight', [embd, vocab]],
    ['output_norm.weight', [embd]],
    ['output.weight', [embd, vocab]],
  ];
  for (let i = 0; i < shape.layers; i++) {
    specs.push(
      [`blk.${i}.attn_norm.weight`, [embd]],
      [`blk.${i}.attn_q.weight`, [embd, embd]],
      [`blk.${i}.attn_k.weight`, [embd, kvDim]],
      [`blk.${i}.attn_v.weight`, [embd, kvDim]],
      [`blk.${i}.attn_output.weight`, [embd, embd]],
      [`blk.${i}.ffn_norm.weight`, [embd]],
      [`blk.${i}.ffn_gate.weight`, [embd, ff]],
      [`blk.${i}.ffn_up.weight`, [embd, ff]],
      [`blk.${i}.ffn_down.weight`, [ff, embd]],
    );
  }
  let offset = 0;
  return specs.map(([name, dims]) => {
    const kind = dims.length === 1 ? 'norm' : 'weight';
    const type: WeightType = kind === 'norm' ? 'f32' : shape.type; // norms stay f32, as llama.cpp's converters write them
    const bytes = tensorByteSize(
      type,
      dims.reduce((a, b) => a * b, 1),
    );
    const plan: TensorPlan = { name, dims, kind, type, offset, bytes };
    offset = alignUp(offset + bytes, GGUF_DEFAULT_ALIGNMENT);
    return plan;
  });
}

function metadata(shape: TinyLlamaShape, name: string): Kv[] {
  const vocab = buildTinyVocab();
  const u32 = (key: string, value: number): Kv => ({ key, type: 'u32', value });
  return [
    { key: 'general.architecture', type: 'string', value: 'llama' },
    { key: 'general.name', type: 'string', value: name },
    u32('general.alignment', GGUF_DEFAULT_ALIGNMENT),
    u32('general.file_type', FILE_TYPE[shape.type]),
    u32('general.quantization_version', 2),
    u32('routerdesk.seed', shape.seed),
    u32('llama.context_length', shape.ctx),
    u32('llama.embedding_length', shape.embd),
    u32('llama.block_count', shape.layers),
    u32('llama.feed_forward_length', shape.ff),
    u32('llama.attention.head_count', shape.heads),
    u32('llama.attention.head_count_kv', shape.kvHeads),
    { key: 'llama.attention.layer_norm_rms_epsilon', type: 'f32', value: 1e-5 },
    u32('llama.rope.dimension_count', shape.embd / shape.heads),
    { key: 'llama.rope.freq_base', type: 'f32', value: 10000 },
    u32('llama.vocab_size', vocab.tokens.length),
    { key: 'tokenizer.ggml.model', type: 'string', value: 'llama' },
    { key: 'tokenizer.ggml.tokens', type: 'array', itemType: 'string', values: vocab.tokens },
    { key: 'tokenizer.ggml.scores', type: 'array', itemType: 'f32', values: vocab.scores },
    { key: 'tokenizer.ggml.token_type', type: 'array', itemType: 'i32', values: vocab.types },
    u32('tokenizer.ggml.unknown_token_id', vocab.unkId),
    u32('tokenizer.ggml.bos_token_id', vocab.bosId),
    u32('tokenizer.ggml.eos_token_id', vocab.eosId),
    { key: 'tokenizer.ggml.add_bos_token', type: 'bool', value: true },
    { key: 'tokenizer.ggml.add_eos_token', type: 'bool', value: false },
    { key: 'tokenizer.chat_template', type: 'string', value: CHATML_TEMPLATE },
  ];
}

/** Little-endian byte builder for the header. */
class Bytes {
  private readonly parts: Buffer[] = [];
  length = 0;
  private push(buf: Buffer) {
    this.parts.push(buf);
    this.length += buf.length;
  }
  u32(v: number) {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    this.push(b);
  }
  u64(v: number) {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.push(b);
  }
  str(v: string) {
    const b = Buffer.from(v, 'utf8');
    this.u64(b.length);
    this.push(b);
  }
  scalar(type: GgufScalarTypeName, v: number | boolean | string) {
    const b = Buffer.alloc(8);
    switch (type) {
      case 'string':
        return this.str(String(v));
      case 'bool':
        return this.push(Buffer.from([v ? 1 : 0]));
      case 'u8':
        b.writeUInt8(Number(v));
        return this.push(b.subarray(0, 1));
      case 'i8':
        b.writeInt8(Number(v));
        return this.push(b.subarray(0, 1));
      case 'u16':
        b.writeUInt16LE(Number(v));
        return this.push(b.subarray(0, 2));
      case 'i16':
        b.writeInt16LE(Number(v));
        return this.push(b.subarray(0, 2));
      case 'u32':
        return this.u32(Number(v));
      case 'i32':
        b.writeInt32LE(Number(v));
        return this.push(b.subarray(0, 4));
      case 'f32':
        b.writeFloatLE(Number(v));
        return this.push(b.subarray(0, 4));
      case 'u64':
        return this.u64(Number(v));
      case 'i64':
        b.writeBigInt64LE(BigInt(Number(v)));
        return this.push(b);
      case 'f64':
        b.writeDoubleLE(Number(v));
        return this.push(b);
    }
  }
  padTo(alignment: number) {
    this.push(Buffer.alloc(alignUp(this.length, alignment) - this.length));
  }
  toBuffer() {
    return Buffer.concat(this.parts);
  }
}

function header(kvs: Kv[], tensors: TensorPlan[]): Buffer {
  const out = new Bytes();
  out.u32(GGUF_MAGIC);
  out.u32(GGUF_VERSION);
  out.u64(tensors.length);
  out.u64(kvs.length);
  for (const kv of kvs) {
    out.str(kv.key);
    out.u32(GgufValueType[kv.type]);
    if (kv.type !== 'array') {
      out.scalar(kv.type, kv.value);
      continue;
    }
    out.u32(GgufValueType[kv.itemType]);
    out.u64(kv.values.length);
    for (const v of kv.values) out.scalar(kv.itemType, v);
  }
  for (const t of tensors) {
    out.str(t.name);
    out.u32(t.dims.length);
    for (const d of t.dims) out.u64(d);
    out.u32(GgmlType[t.type]);
    out.u64(t.offset);
  }
  out.padTo(GGUF_DEFAULT_ALIGNMENT);
  return out.toBuffer();
}

/** Values of one tensor: norms are ones, weights uniform with variance 1/fan_in. */
function tensorValues(t: TensorPlan, random: () => number): Float32Array {
  const n = t.dims.reduce((a, b) => a * b, 1);
  const values = new Float32Array(n);
  if (t.kind === 'norm') return values.fill(1);
  const limit = Math.sqrt(3 / t.dims[0]);
  for (let i = 0; i < n; i++) values[i] = (random() * 2 - 1) * limit;
  return values;
}

/** Writes the model to `outPath` (replacing it) and describes what it wrote. */
export async function writeTinyLlamaGguf(outPath: string, options: TinyLlamaOptions): Promise<TinyLlamaWriteResult> {
  const shape = resolveTinyLlamaShape(options);
  const name = `tiny-llama-e${shape.embd}-l${shape.layers}-${shape.type}-s${shape.seed}`;
  const tensors = planTensors(shape);
  const head = header(metadata(shape, name), tensors);
  const random = seededRandom(shape.seed);
  const file = await open(outPath, 'w');
  let bytes = 0;
  let params = 0;
  try {
    await file.write(head);
    bytes += head.length;
    for (const t of tensors) {
      const values = tensorValues(t, random);
      params += values.length;
      const data = encodeTensor(values, t.type);
      const padding = alignUp(data.length, GGUF_DEFAULT_ALIGNMENT) - data.length;
      await file.write(padding ? Buffer.concat([data, Buffer.alloc(padding)]) : data);
      bytes += data.length + padding;
    }
  } finally {
    await file.close();
  }
  return { ...shape, path: outPath, name, tensors: tensors.length, params, bytes };
}

/** One line describing a written model, for the CLI. */
export function describeTinyLlama(r: TinyLlamaWriteResult): string {
  return (
    `wrote ${r.path}: ${r.name} arch=llama embd=${r.embd} layers=${r.layers} heads=${r.heads} kv_heads=${r.kvHeads} ` +
    `ff=${r.ff} ctx=${r.ctx} type=${r.type} seed=${r.seed} vocab=${r.vocab} tensors=${r.tensors} params=${r.params} bytes=${r.bytes}`
  );
}
