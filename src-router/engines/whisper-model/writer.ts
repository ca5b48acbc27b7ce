/** Writes a tiny whisper.cpp model with seeded random weights (the layout in `layout.ts`). */

import { once } from 'node:events';
import { createWriteStream, renameSync, rmSync } from 'node:fs';
import { seededRandom } from '../../seeded-random';
import { encodeTensor } from '../llama-node/tensor-encode';
import {
  GGML_FILE_MAGIC,
  GGML_TYPE,
  HPARAM_ORDER,
  MEL_FILTERS,
  melFilters,
  N_TEXT_TOKENS,
  SPOKEN_TOKEN,
  type TensorSpec,
  type TinyWhisperOptions,
  TOKEN_BEG,
  TOKEN_EOT,
  tinyWhisperHparams,
  type WhisperHparams,
  whisperTensors,
} from './layout';
import { tinyVocab } from './vocab';

/** Magic, hparams, mel filters and vocabulary: everything before the first tensor. */
export function whisperHeader(h: WhisperHparams, vocab: readonly string[]): Buffer {
  const parts: Buffer[] = [];
  const i32 = (...values: number[]) => {
    const b = Buffer.alloc(4 * values.length);
    values.forEach((v, i) => b.writeInt32LE(v, 4 * i));
    parts.push(b);
  };
  const u32 = Buffer.alloc(4);
  u32.writeUInt32LE(GGML_FILE_MAGIC, 0);
  parts.push(u32);
  i32(...HPARAM_ORDER.map((k) => h[k]));
  i32(MEL_FILTERS.n_mel, MEL_FILTERS.n_fft);
  const filters = melFilters();
  parts.push(Buffer.from(filters.buffer, filters.byteOffset, filters.byteLength));
  i32(vocab.length);
  for (const word of vocab) {
    const bytes = Buffer.from(word, 'utf8');
    i32(bytes.length);
    parts.push(bytes);
  }
  return Buffer.concat(parts);
}

/** One tensor's record head: n_dims, name length, type, dims, name. */
export function tensorHead(spec: TensorSpec): Buffer {
  const name = Buffer.from(spec.name, 'utf8');
  const head = Buffer.alloc(12 + 4 * spec.ne.length);
  head.writeInt32LE(spec.ne.length, 0);
  head.writeInt32LE(name.length, 4);
  head.writeInt32LE(GGML_TYPE[spec.type], 8);
  spec.ne.forEach((n, i) => head.writeInt32LE(n, 12 + 4 * i));
  return Buffer.concat([head, name]);
}

/**
 * Two orthogonal zero-mean ±1 patterns of the state width, A and B (a layer norm keeps their direction). Timestamps
 * embed as A, the spoken token as A + B, end-of-text as 4B - A/2: after a timestamp the spoken token scores highest
 * (A·(A+B) = n against -n/2), after the spoken token end-of-text does ((A+B)·(4B - A/2) = 3.5n against 2n).
 */
export function chainDirections(n: number): { a: number[]; b: number[] } {
  return {
    a: Array.from({ length: n }, (_, i) => (i % 2 === 0 ? 1 : -1)),
    b: Array.from({ length: n }, (_, i) => (Math.floor(i / 2) % 2 === 0 ? 1 : -1)),
  };
}

/** A tensor's values: ones, zeros, uniform in ±scale (1/sqrt of its input width, so activations stay near 1), or the wired token embedding. */
export function tensorValues(spec: TensorSpec, random: () => number): Float32Array {
  const count = spec.ne.reduce((a, b) => a * b, 1);
  const values = new Float32Array(count);
  if (spec.init === 'ones') values.fill(1);
  else if (spec.init === 'random' || spec.init === 'token-embedding') {
    const scale = 1 / Math.sqrt(spec.ne[0]!);
    for (let i = 0; i < count; i++) values[i] = (random() * 2 - 1) * scale;
  }
  if (spec.init === 'token-embedding') {
    const [n, vocab] = spec.ne as [number, number];
    const { a, b } = chainDirections(n);
    const row = (id: number, f: (i: number) => number) => {
      for (let i = 0; i < n; i++) values[id * n + i] = f(i);
    };
    for (let id = TOKEN_BEG; id < vocab; id++) row(id, (i) => a[i]!);
    row(SPOKEN_TOKEN, (i) => a[i]! + b[i]!);
    row(TOKEN_EOT, (i) => 4 * b[i]! - a[i]! / 2);
  }
  return values;
}

export interface TinyWhisperResult {
  path: string;
  bytes: number;
  hparams: WhisperHparams;
  tensors: number;
  seed: number;
}

/**
 * Writes the model to `outPath` (through a temp file renamed into place, so an interrupted write never leaves a
 * model that looks whole); the same options and seed always give the same bytes.
 */
export async function writeTinyWhisperModel(
  outPath: string,
  options: TinyWhisperOptions = {},
): Promise<TinyWhisperResult> {
  const hparams = tinyWhisperHparams(options);
  const seed = options.seed ?? 1;
  const random = seededRandom(seed);
  const tensors = whisperTensors(hparams);
  const partial = `${outPath}.partial-${process.pid}`;
  const out = createWriteStream(partial);
  let bytes = 0;
  const write = async (chunk: Buffer) => {
    bytes += chunk.length;
    if (!out.write(chunk)) await once(out, 'drain');
  };
  const closed = new Promise<void>((resolve, reject) => {
    out.once('close', resolve);
    out.once('error', reject);
  });
  // A failed open rejects `closed` before it is awaited; the error is thrown by the write that meets it.
  closed.catch(() => {});
  try {
    await write(whisperHeader(hparams, tinyVocab(N_TEXT_TOKENS)));
    for (const spec of tensors) {
      await write(tensorHead(spec));
      await write(encodeTensor(tensorValues(spec, random), spec.type));
    }
    out.end();
    await closed;
    renameSync(partial, outPath);
  } catch (err) {
    out.destroy();
    rmSync(partial, { force: true });
    throw err;
  }
  return { path: outPath, bytes, hparams, tensors: tensors.length, seed };
}

export const describeTinyWhisper = (r: TinyWhisperResult) =>
  `${r.path}: tiny whisper model, ${r.hparams.n_audio_layer}+${r.hparams.n_text_layer} layers, state ${r.hparams.n_audio_state}, ${r.hparams.ftype === 1 ? 'f16' : 'f32'}, ${r.tensors} tensors, seed ${r.seed}, ${(r.bytes / 1e6).toFixed(1)} MB`;
