import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readGgufHeader } from '../../src-router/engines/llama-node/gguf-reader';
import {
  resolveTinyLlamaShape,
  type TinyLlamaOptions,
  writeTinyLlamaGguf,
} from '../../src-router/engines/llama-node/gguf-writer';
import { fromHalfBits, toHalfBits } from '../../src-router/engines/llama-node/tensor-encode';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gguf-writer-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const base: TinyLlamaOptions = { embd: 64, layers: 2, type: 'f32', seed: 7 };
let counter = 0;
async function write(options: Partial<TinyLlamaOptions> = {}) {
  const path = join(dir, `m${counter++}.gguf`);
  const result = await writeTinyLlamaGguf(path, { ...base, ...options });
  return { path, result };
}
const sha = async (path: string) =>
  createHash('sha256')
    .update(await readFile(path))
    .digest('hex');

describe('writeTinyLlamaGguf', () => {
  it('writes a GGUF v3 llama model the reader reads back', async () => {
    const { path, result } = await write({ ctx: 512 });
    const h = await readGgufHeader(path);
    expect(h.version).toBe(3);
    expect(h.tensorCount).toBe(3 + 9 * 2);
    expect(h.tensors).toHaveLength(h.tensorCount);
    expect(h.metadata.get('general.architecture')).toBe('llama');
    expect(h.metadata.get('llama.embedding_length')).toBe(64);
    expect(h.metadata.get('llama.block_count')).toBe(2);
    expect(h.metadata.get('llama.context_length')).toBe(512);
    expect(h.metadata.get('llama.attention.head_count')).toBe(4);
    expect(h.metadata.get('tokenizer.ggml.model')).toBe('llama');
    expect(String(h.metadata.get('tokenizer.chat_template'))).toContain('<|im_start|>');
    const tokens = h.metadata.get('tokenizer.ggml.tokens') as string[];
    const types = h.metadata.get('tokenizer.ggml.token_type') as number[];
    expect(tokens).toHaveLength(result.vocab);
    expect((h.metadata.get('tokenizer.ggml.scores') as number[]).length).toBe(result.vocab);
    expect(tokens.filter((_, i) => types[i] === 6)).toHaveLength(256); // byte tokens
    expect(tokens).toContain('<0x0A>');
    expect(types[tokens.indexOf('<|im_end|>')]).toBe(3); // control
    expect(h.metadata.get('tokenizer.ggml.eos_token_id')).toBe(tokens.indexOf('<|im_end|>'));
    const embd = h.tensors.find((t) => t.name === 'token_embd.weight');
    expect(embd?.dims).toEqual([64, result.vocab]);
    expect(embd?.typeName).toBe('f32');
    expect(h.tensors.find((t) => t.name === 'blk.1.ffn_down.weight')?.dims).toEqual([result.ff, 64]);
    for (const t of h.tensors) expect(t.offset % h.alignment).toBe(0);
  });

  it('is deterministic for a seed and differs across seeds', async () => {
    const a = await write({ seed: 42 });
    const b = await write({ seed: 42 });
    const c = await write({ seed: 43 });
    expect(await sha(a.path)).toBe(await sha(b.path));
    expect(await sha(a.path)).not.toBe(await sha(c.path));
    expect((await stat(a.path)).size).toBe((await stat(c.path)).size);
  });

  it('sizes the data of each weight type exactly', async () => {
    const sizes: Record<string, number> = {};
    for (const type of ['f32', 'f16', 'q8_0'] as const) {
      const { path, result } = await write({ type });
      const h = await readGgufHeader(path);
      expect(h.fileSize).toBe(result.bytes);
      const last = h.tensors[h.tensors.length - 1];
      expect(h.dataOffset + last.offset + (last.bytes ?? 0)).toBeLessThanOrEqual(h.fileSize);
      const q = h.tensors.find((t) => t.name === 'blk.0.attn_q.weight');
      const norm = h.tensors.find((t) => t.name === 'blk.0.attn_norm.weight');
      expect(q?.typeName).toBe(type);
      expect(norm?.typeName).toBe('f32');
      expect(q?.bytes).toBe({ f32: 64 * 64 * 4, f16: 64 * 64 * 2, q8_0: ((64 * 64) / 32) * 34 }[type]);
      sizes[type] = result.bytes;
    }
    expect(sizes.f16).toBeLessThan(sizes.f32);
    expect(sizes.q8_0).toBeLessThan(sizes.f16);
  });

  it('rejects bad options', async () => {
    expect(() => resolveTinyLlamaShape({ ...base, embd: 60, heads: 7 })).toThrow(/multiple of heads/);
    expect(() => resolveTinyLlamaShape({ ...base, embd: 48, heads: 4, type: 'q8_0' })).toThrow(/q8_0/);
    expect(() => resolveTinyLlamaShape({ ...base, layers: 0 })).toThrow(/layers/);
    expect(() => resolveTinyLlamaShape({ ...base, seed: -1 })).toThrow(/seed/);
    // @ts-expect-error an unsupported type is rejected at run time too
    await expect(write({ type: 'q4_0' })).rejects.toThrow(/type must be one of/);
  });
});

describe('half floats', () => {
  it('round-trips representative values', () => {
    for (const v of [0, 1, -2, 0.5, 65504, 6.103515625e-5, 5.960464477539063e-8])
      expect(fromHalfBits(toHalfBits(v))).toBe(v);
    expect(fromHalfBits(toHalfBits(0.1))).toBeCloseTo(0.1, 3);
    expect(toHalfBits(1e6)).toBe(0x7c00);
  });
});
