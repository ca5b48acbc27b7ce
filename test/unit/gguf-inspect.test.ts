import { execFileSync } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GGUF_READS_AT_ONCE, GgufHeaders } from '../../src-router/engines/gguf-headers';
import { ggufFacts, suggestedCapabilities } from '../../src-router/engines/gguf-inspect';
import {
  GGUF_LIMITS,
  GgufLimitExceeded,
  type GgufLimits,
  readGgufHeader,
} from '../../src-router/engines/llama-node/gguf-reader';
import { writeTinyLlamaGguf } from '../../src-router/engines/llama-node/gguf-writer';
import { bigHeaderGguf, deepGguf, hugeArrayGguf, hugeStringGguf, manyKeysGguf } from '../support/crafted-gguf';
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
    const skipped = await readGgufHeader(file, { metadataOnly: true, keepArray: () => false });
    expect(skipped.metadata.get('tokenizer.ggml.tokens')).toEqual([]);
    expect(skipped.metadata.get('llama.context_length')).toBe(4096);
    const limited = (l: Partial<GgufLimits>) =>
      readGgufHeader(file, { metadataOnly: true, keepArray: () => false, limits: { ...GGUF_LIMITS, ...l } });
    await expect(limited({ headerBytes: 100_000 })).rejects.toMatchObject({ limit: 'headerBytes', max: 100_000 });
    await expect(limited({ keys: 1 })).rejects.toThrow(
      'the GGUF header goes past the limit of 1 metadata keys: the metadata has 2',
    );
    const whole = await readGgufHeader(file);
    expect((whole.metadata.get('tokenizer.ggml.tokens') as string[]).length).toBe(20_000);
    // Kept items count against their limit; moved-past ones do not.
    await expect(readGgufHeader(file, { limits: { ...GGUF_LIMITS, itemsKept: 19_999 } })).rejects.toMatchObject({
      limit: 'itemsKept',
    });
  });

  it('refuses crafted headers by their declared counts, lengths and depth, before reading what they declare', async () => {
    const dir = tempDir();
    const cases: [string, Buffer, keyof GgufLimits, string][] = [
      ['huge-array', hugeArrayGguf(), 'arrayLength', '1,048,576 items in one array'],
      ['huge-string', hugeStringGguf(), 'stringBytes', '1 MiB in one string'],
      ['deep', deepGguf(3), 'depth', 'arrays nested 2 deep'],
      ['many-keys', manyKeysGguf(), 'keys', '4,096 metadata keys'],
    ];
    for (const [name, bytes, limit, says] of cases) {
      const file = join(dir, `${name}.gguf`);
      writeFileSync(file, bytes);
      // Kept or moved past: the same limit.
      for (const keepArray of [undefined, () => false]) {
        const err = await readGgufHeader(file, { keepArray }).catch((e: unknown) => e);
        expect(err, name).toBeInstanceOf(GgufLimitExceeded);
        expect((err as GgufLimitExceeded).limit).toBe(limit);
        expect((err as Error).message).toContain(says);
      }
    }
    writeFileSync(join(dir, 'deep2.gguf'), deepGguf(2));
    expect((await readGgufHeader(join(dir, 'deep2.gguf'))).metadata.get('x.deep')).toEqual([[]]);
  });

  it('stops a 64 MiB header at the header limit, kept or moved past', async () => {
    const file = join(tempDir(), 'big.gguf');
    writeFileSync(file, bigHeaderGguf(64));
    for (const keepArray of [() => false, (k: string) => k === 'tokenizer.ggml.tokens'])
      await expect(readGgufHeader(file, { keepArray })).rejects.toMatchObject({
        limit: 'headerBytes',
        message: expect.stringContaining('32 MiB of header'),
      });
  });

  it('reads each file version once, a few at a time; a header past a limit stays an error without a new read', async () => {
    const dir = tempDir();
    const big = join(dir, 'big.gguf');
    writeFileSync(big, bigHeaderGguf(4));
    const good = join(dir, 'good.gguf');
    await writeTinyLlamaGguf(good, { embd: 32, layers: 1, type: 'f32', seed: 1, ctx: 2048 });
    const logged: string[] = [];
    const headers = new GgufHeaders({
      onError: (path, message) => logged.push(`${path}: ${message}`),
      limits: { ...GGUF_LIMITS, headerBytes: 2 * 1024 * 1024 },
    });
    const reads = await Promise.all([
      headers.summary(big),
      headers.summary(big),
      headers.summary(big),
      headers.summary(good),
    ]);
    for (const r of reads.slice(0, 3)) expect(r).toMatchObject({ limit: 'headerBytes', cached: true });
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(`${big}: its GGUF header goes past the limit of 2 MiB of header: it needs byte 2,097,`);
    const ok = reads[3];
    if (!('summary' in ok)) throw new Error(ok.error);
    expect(ok.summary.metadata.get('general.architecture')).toBe('llama');
    expect(ok.summary.eosText).not.toBeNull();
    expect(ok.summary.omitted.get('tokenizer.ggml.tokens')).toBeGreaterThan(16);
    expect(await headers.summary(big)).toBe(reads[0]);
    expect(logged).toHaveLength(1);
    expect(GGUF_READS_AT_ONCE).toBeLessThan(3);
  });

  it('refuses a FIFO and a symlink to one without blocking, and says what it is', async () => {
    const dir = tempDir();
    const fifo = join(dir, 'pipe.gguf');
    execFileSync('mkfifo', [fifo]);
    symlinkSync(fifo, join(dir, 'link.gguf'));
    const headers = new GgufHeaders();
    for (const p of [fifo, join(dir, 'link.gguf')])
      expect(await headers.summary(p)).toEqual({ error: 'it is a FIFO, not a regular file', cached: false });
    await expect(readGgufHeader(fifo)).rejects.toThrow('is a FIFO, not a regular file');
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
