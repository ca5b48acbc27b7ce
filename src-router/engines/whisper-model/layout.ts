/**
 * whisper.cpp's legacy model file ("ggml" magic), as its loader (`whisper_model_load`) reads it: the magic, eleven
 * int32 hparams, the mel filter bank (n_mel, n_fft, floats), the vocabulary (count, then length-prefixed bytes), then
 * tensors until the end of the file, each as n_dims, name length, type, the dims (innermost first), the name, the data.
 * Pure: names and shapes only.
 */

/** `ggml` read as a little-endian uint32. */
export const GGML_FILE_MAGIC = 0x67676d6c;

/** ggml tensor types this writer uses. */
export const GGML_TYPE = { f32: 0, f16: 1 } as const;
export type WhisperWeightType = keyof typeof GGML_TYPE;

/**
 * English-only vocabulary size: the loader puts its special tokens at fixed ids (end of text 50256, start 50257, …,
 * timestamps from 50363 on), so a smaller vocabulary would index past the token embedding. 51864 is the size of the
 * `.en` models; text tokens are 0..50255.
 */
export const N_VOCAB_EN = 51864;
export const N_TEXT_TOKENS = 50256;

export interface WhisperHparams {
  n_vocab: number;
  n_audio_ctx: number;
  n_audio_state: number;
  n_audio_head: number;
  n_audio_layer: number;
  n_text_ctx: number;
  n_text_state: number;
  n_text_head: number;
  n_text_layer: number;
  n_mels: number;
  /** 0: f32 weights, 1: f16 (the big matrices and the convolutions; biases, norms and positions stay f32). */
  ftype: number;
}

/** The hparams in the order the file holds them. */
export const HPARAM_ORDER: readonly (keyof WhisperHparams)[] = [
  'n_vocab',
  'n_audio_ctx',
  'n_audio_state',
  'n_audio_head',
  'n_audio_layer',
  'n_text_ctx',
  'n_text_state',
  'n_text_head',
  'n_text_layer',
  'n_mels',
  'ftype',
];

export interface TinyWhisperOptions {
  state?: number;
  heads?: number;
  layers?: number;
  type?: WhisperWeightType;
  seed?: number;
}

/** The tiny model's hparams: 30 s windows (1500 audio positions, 80 mels) as every whisper model, small everything else. */
export function tinyWhisperHparams(o: TinyWhisperOptions = {}): WhisperHparams {
  const state = o.state ?? 64;
  const heads = o.heads ?? 2;
  const layers = o.layers ?? 1;
  if (!Number.isInteger(state) || state < 8 || state > 1024 || state % heads !== 0 || state % 4 !== 0)
    throw new RangeError(`state must be 8..1024, a multiple of 4 and divisible by heads, got ${state} / ${heads}`);
  if (!Number.isInteger(layers) || layers < 1 || layers > 4) throw new RangeError(`layers must be 1..4, got ${layers}`);
  return {
    n_vocab: N_VOCAB_EN,
    n_audio_ctx: 1500,
    n_audio_state: state,
    n_audio_head: heads,
    n_audio_layer: layers,
    n_text_ctx: 448,
    n_text_state: state,
    n_text_head: heads,
    n_text_layer: layers,
    n_mels: 80,
    ftype: (o.type ?? 'f16') === 'f16' ? 1 : 0,
  };
}

/**
 * How a tensor's values are drawn: layer norm weights 1, biases 0, the rest small random, except the decoder's, which
 * is wired so every window decodes in one short pass (below).
 */
export type TensorInit = 'ones' | 'zeros' | 'random' | 'token-embedding';

/**
 * The decoder is a fixed chain, so a transcription is one pass with a confident answer (random weights would fail
 * whisper's log-probability check and be decoded again at five more temperatures): its attention and MLP outputs and
 * positions are zero, so each step's logits are the token embedding dotted with the current token's; timestamps point
 * at SPOKEN_TOKEN, which points at end-of-text. Every window thus reads "<timestamp> hello". The encoder stays random.
 */
export const SPOKEN_TOKEN = 1000;
export const SPOKEN_TEXT = ' hello';
export const TOKEN_EOT = 50256;
export const TOKEN_BEG = 50363;

export interface TensorSpec {
  name: string;
  /** Dimensions, innermost first (ggml's ne). */
  ne: number[];
  type: WhisperWeightType;
  init: TensorInit;
}

/** Every tensor the loader expects, in the order whisper.cpp's converter writes them (the loader accepts any order). */
export function whisperTensors(h: WhisperHparams): TensorSpec[] {
  const w: WhisperWeightType = h.ftype === 1 ? 'f16' : 'f32';
  const s = h.n_audio_state;
  const t: TensorSpec[] = [];
  const add = (name: string, ne: number[], type: WhisperWeightType, init: TensorInit) =>
    t.push({ name, ne, type, init });
  const block = (p: string, attn: string, cross: boolean) => {
    // The decoder's blocks add nothing to the residual stream (see SPOKEN_TOKEN); the encoder's are random.
    const out: TensorInit = cross ? 'zeros' : 'random';
    add(`${p}.mlp_ln.weight`, [s], 'f32', 'ones');
    add(`${p}.mlp_ln.bias`, [s], 'f32', 'zeros');
    add(`${p}.mlp.0.weight`, [s, 4 * s], w, 'random');
    add(`${p}.mlp.0.bias`, [4 * s], 'f32', 'zeros');
    add(`${p}.mlp.2.weight`, [4 * s, s], w, out);
    add(`${p}.mlp.2.bias`, [s], 'f32', 'zeros');
    add(`${p}.${attn}_ln.weight`, [s], 'f32', 'ones');
    add(`${p}.${attn}_ln.bias`, [s], 'f32', 'zeros');
    add(`${p}.${attn}.query.weight`, [s, s], w, 'random');
    add(`${p}.${attn}.query.bias`, [s], 'f32', 'zeros');
    add(`${p}.${attn}.key.weight`, [s, s], w, 'random');
    add(`${p}.${attn}.value.weight`, [s, s], w, 'random');
    add(`${p}.${attn}.value.bias`, [s], 'f32', 'zeros');
    add(`${p}.${attn}.out.weight`, [s, s], w, out);
    add(`${p}.${attn}.out.bias`, [s], 'f32', 'zeros');
    if (cross) {
      // The cross-attention tensors use the same shapes under `cross_attn`.
      add(`${p}.cross_attn_ln.weight`, [s], 'f32', 'ones');
      add(`${p}.cross_attn_ln.bias`, [s], 'f32', 'zeros');
      add(`${p}.cross_attn.query.weight`, [s, s], w, 'random');
      add(`${p}.cross_attn.query.bias`, [s], 'f32', 'zeros');
      add(`${p}.cross_attn.key.weight`, [s, s], w, 'random');
      add(`${p}.cross_attn.value.weight`, [s, s], w, 'random');
      add(`${p}.cross_attn.value.bias`, [s], 'f32', 'zeros');
      add(`${p}.cross_attn.out.weight`, [s, s], w, 'zeros');
      add(`${p}.cross_attn.out.bias`, [s], 'f32', 'zeros');
    }
  };
  add('encoder.positional_embedding', [s, h.n_audio_ctx], 'f32', 'random');
  add('encoder.conv1.weight', [3, h.n_mels, s], w, 'random');
  add('encoder.conv1.bias', [1, s], 'f32', 'zeros');
  add('encoder.conv2.weight', [3, s, s], w, 'random');
  add('encoder.conv2.bias', [1, s], 'f32', 'zeros');
  for (let i = 0; i < h.n_audio_layer; i++) block(`encoder.blocks.${i}`, 'attn', false);
  add('encoder.ln_post.weight', [s], 'f32', 'ones');
  add('encoder.ln_post.bias', [s], 'f32', 'zeros');
  add('decoder.positional_embedding', [h.n_text_state, h.n_text_ctx], 'f32', 'zeros');
  add('decoder.token_embedding.weight', [h.n_text_state, h.n_vocab], w, 'token-embedding');
  for (let i = 0; i < h.n_text_layer; i++) block(`decoder.blocks.${i}`, 'attn', true);
  add('decoder.ln.weight', [s], 'f32', 'ones');
  add('decoder.ln.bias', [s], 'f32', 'zeros');
  return t;
}

/** Mel filter bank size whisper uses: 80 filters over the 201 bins of a 400-sample FFT. */
export const MEL_FILTERS = { n_mel: 80, n_fft: 201 } as const;

/** A triangular filter bank, `n_mel` rows of `n_fft` weights, the centres spaced evenly over the bins. */
export function melFilters(n_mel: number = MEL_FILTERS.n_mel, n_fft: number = MEL_FILTERS.n_fft): Float32Array {
  const out = new Float32Array(n_mel * n_fft);
  const step = (n_fft - 1) / (n_mel + 1);
  for (let m = 0; m < n_mel; m++) {
    const lo = m * step;
    const mid = (m + 1) * step;
    const hi = (m + 2) * step;
    for (let k = 0; k < n_fft; k++) {
      const v = k <= lo || k >= hi ? 0 : k <= mid ? (k - lo) / (mid - lo) : (hi - k) / (hi - mid);
      out[m * n_fft + k] = v;
    }
  }
  return out;
}
