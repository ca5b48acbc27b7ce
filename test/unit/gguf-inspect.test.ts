import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ggufFacts, suggestedCapabilities } from '../../src-router/engines/gguf-inspect';
import { GgufHeaderTooLarge, readGgufHeader } from '../../src-router/engines/llama-node/gguf-reader';
import { tempDir } from '../support/node-harness';

/** A GGUF file with one string array of `n` items of `len` bytes and a u32 after it, no tensors. */
function withVocab(n: number, len: number): Buffer {
  const parts: Buffer[] = [];
  const u32 = (v: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    parts.push(b);
  };
  const u64 = (v: number) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    parts.push(b);
  };
  const str = (s: string) => {
    u64(Buffer.byteLength(s));
    parts.push(Buffer.from(s));
  };
  u32(0x46554747);
  u32(3);
  u64(0);
  u64(2);
  str('tokenizer.ggml.tokens');
  u32(9);
  u32(8);
  u64(n);
  for (let i = 0; i < n; i++) str('x'.repeat(len));
  str('llama.context_length');
  u32(4);
  u32(4096);
  return Buffer.concat(parts);
}

describe('GGUF inspection', () => {
  it('reads the metadata past a vocabulary without keeping it, and stops at its bound', async () => {
    const file = join(tempDir(), 'vocab.gguf');
    writeFileSync(file, withVocab(20_000, 10));
    const skipped = await readGgufHeader(file, { metadataOnly: true, skipArrays: true });
    expect(skipped.metadata.get('tokenizer.ggml.tokens')).toEqual([]);
    expect(skipped.metadata.get('llama.context_length')).toBe(4096);
    await expect(
      readGgufHeader(file, { metadataOnly: true, skipArrays: true, maxBytes: 100_000 }),
    ).rejects.toBeInstanceOf(GgufHeaderTooLarge);
    await expect(readGgufHeader(file, { metadataOnly: true, skipArrays: true, maxMetadataKeys: 1 })).rejects.toThrow(
      'implausible metadata count: 2 keys',
    );
    const whole = await readGgufHeader(file);
    expect((whole.metadata.get('tokenizer.ggml.tokens') as string[]).length).toBe(20_000);
  });

  it('says embedding from the architecture or the pooling type, projector from clip or general.type', () => {
    const facts = (m: Record<string, string | number>) => ggufFacts(new Map(Object.entries(m)));
    expect(facts({ 'general.architecture': 'bert' }).embedding).toBe(true);
    expect(facts({ 'general.architecture': 'qwen3', 'qwen3.pooling_type': 3 }).embedding).toBe(true);
    expect(facts({ 'general.architecture': 'qwen3', 'qwen3.pooling_type': 4 }).embedding).toBe(false);
    expect(facts({ 'general.architecture': 'llama', 'llama.context_length': 8192 })).toMatchObject({
      embedding: false,
      projector: false,
      contextLength: 8192,
    });
    expect(facts({ 'general.architecture': 'clip' }).projector).toBe(true);
    expect(facts({ 'general.architecture': 'x', 'general.type': 'mmproj' }).projector).toBe(true);
    expect(facts({})).toEqual({
      architecture: null,
      name: null,
      contextLength: null,
      embedding: false,
      projector: false,
    });
    expect(suggestedCapabilities(facts({ 'general.architecture': 'llama' }), true)).toEqual(['text', 'multimodal']);
    expect(suggestedCapabilities(facts({ 'general.architecture': 'bert' }), true)).toEqual(['embedding']);
    expect(suggestedCapabilities(facts({ 'general.architecture': 'clip' }), false)).toEqual([]);
  });
});
