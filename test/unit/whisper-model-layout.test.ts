import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  GGML_FILE_MAGIC,
  HPARAM_ORDER,
  melFilters,
  N_TEXT_TOKENS,
  N_VOCAB_EN,
  tinyWhisperHparams,
  whisperTensors,
} from '../../src-router/engines/whisper-model/layout';
import { tinyToken } from '../../src-router/engines/whisper-model/vocab';
import { writeTinyWhisperModel } from '../../src-router/engines/whisper-model/writer';
import { tempDir } from '../support/node-harness';

// The tiny whisper model is read back field by field as whisper.cpp's loader reads it: magic, 11 hparams, the mel
// filters, the vocabulary, then tensor records to the end of the file, each exactly as long as its shape and type say.

function readModel(buf: Buffer) {
  let at = 0;
  const i32 = () => {
    const v = buf.readInt32LE(at);
    at += 4;
    return v;
  };
  const magic = buf.readUInt32LE(0);
  at = 4;
  const hparams = Object.fromEntries(HPARAM_ORDER.map((k) => [k, i32()]));
  const nMel = i32();
  const nFft = i32();
  at += nMel * nFft * 4;
  const nVocab = i32();
  const vocab: string[] = [];
  for (let i = 0; i < nVocab; i++) {
    const len = i32();
    vocab.push(buf.toString('utf8', at, at + len));
    at += len;
  }
  const tensors: { name: string; ne: number[]; type: number; bytes: number }[] = [];
  while (at < buf.length) {
    const nDims = i32();
    const nameLen = i32();
    const type = i32();
    const ne = Array.from({ length: nDims }, () => i32());
    const name = buf.toString('utf8', at, at + nameLen);
    at += nameLen;
    const bytes = ne.reduce((a, b) => a * b, 1) * (type === 0 ? 4 : 2);
    tensors.push({ name, ne, type, bytes });
    at += bytes;
  }
  return { magic, hparams, nMel, nFft, vocab, tensors, end: at };
}

describe('tiny whisper model layout', () => {
  it('is what whisper.cpp’s loader reads: magic, hparams, filters, vocabulary, every tensor once, nothing after', async () => {
    const file = join(tempDir(), 'w.bin');
    const result = await writeTinyWhisperModel(file, { seed: 3 });
    const m = readModel(readFileSync(file));
    expect(m.magic).toBe(GGML_FILE_MAGIC);
    expect(m.hparams).toEqual({
      n_vocab: N_VOCAB_EN,
      n_audio_ctx: 1500,
      n_audio_state: 64,
      n_audio_head: 2,
      n_audio_layer: 1,
      n_text_ctx: 448,
      n_text_state: 64,
      n_text_head: 2,
      n_text_layer: 1,
      n_mels: 80,
      ftype: 1,
    });
    expect([m.nMel, m.nFft]).toEqual([80, 201]);
    // The text tokens only: the loader names the special ones (end of text 50256 on) itself.
    expect(m.vocab).toHaveLength(N_TEXT_TOKENS);
    expect(m.vocab[0]).toBe(tinyToken(0));
    // whisper.cpp looks the lone space up by its text (suppress_blank): without it every transcription fails with map::at.
    expect(m.vocab.indexOf(' ')).toBe(220);
    expect(m.end).toBe(result.bytes);
    // The loader's count: 10 inputs + 15 + 15 per encoder layer + 24 per decoder layer is its upper bound; we write exactly 7 + 15 + 4 + 24.
    expect(m.tensors).toHaveLength(50);
    expect(new Set(m.tensors.map((t) => t.name)).size).toBe(50);
    const byName = new Map(m.tensors.map((t) => [t.name, t]));
    expect(byName.get('encoder.conv1.weight')).toMatchObject({ ne: [3, 80, 64], type: 1 });
    expect(byName.get('encoder.conv1.bias')).toMatchObject({ ne: [1, 64], type: 0 });
    expect(byName.get('encoder.positional_embedding')).toMatchObject({ ne: [64, 1500], type: 0 });
    expect(byName.get('decoder.token_embedding.weight')).toMatchObject({ ne: [64, N_VOCAB_EN], type: 1 });
    expect(byName.get('decoder.blocks.0.cross_attn.value.bias')).toMatchObject({ ne: [64], type: 0 });
    expect(byName.get('encoder.blocks.0.mlp.0.weight')).toMatchObject({ ne: [64, 256], type: 1 });
    expect(byName.has('encoder.blocks.0.attn.key.bias')).toBe(false); // whisper's key projections have no bias
  });

  it('f32 weights when asked; more layers add 15 encoder and 24 decoder tensors each', () => {
    const h = tinyWhisperHparams({ type: 'f32', layers: 2 });
    expect(h.ftype).toBe(0);
    const tensors = whisperTensors(h);
    expect(tensors).toHaveLength(50 + 15 + 24);
    expect(tensors.every((t) => t.type === 'f32')).toBe(true);
  });

  it('the same seed gives the same bytes; another seed other weights', async () => {
    const dir = tempDir();
    const hash = async (name: string, seed: number) => {
      await writeTinyWhisperModel(join(dir, name), { seed });
      return createHash('sha256')
        .update(readFileSync(join(dir, name)))
        .digest('hex');
    };
    const a = await hash('a.bin', 5);
    expect(await hash('b.bin', 5)).toBe(a);
    expect(await hash('c.bin', 6)).not.toBe(a);
  });

  it('an unwritable destination fails and leaves no file that looks like a model', async () => {
    const dir = tempDir();
    await expect(writeTinyWhisperModel(join(dir, 'missing', 'w.bin'))).rejects.toThrow(/ENOENT/);
    await writeTinyWhisperModel(join(dir, 'w.bin'), { seed: 2 });
    expect(readdirSync(dir)).toEqual(['w.bin']);
  });

  it('refuses shapes the loader cannot take', () => {
    expect(() => tinyWhisperHparams({ state: 65, heads: 2 })).toThrow(RangeError);
    expect(() => tinyWhisperHparams({ layers: 0 })).toThrow(RangeError);
  });

  it('filters are triangles within [0, 1]; tokens are distinct words', () => {
    const f = melFilters();
    expect(f).toHaveLength(80 * 201);
    expect(Math.max(...f)).toBeLessThanOrEqual(1);
    expect(Math.min(...f)).toBe(0);
    const words = new Set(Array.from({ length: 5000 }, (_, i) => tinyToken(i)));
    expect(words.size).toBe(5000);
  });
});
