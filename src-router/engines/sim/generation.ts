import { createHash } from 'node:crypto';
import { setTimeout as delay, setImmediate as yieldToLoop } from 'node:timers/promises';

const WORDS = [
  'the',
  'router',
  'sends',
  'a',
  'request',
  'to',
  'one',
  'engine',
  'and',
  'it',
  'answers',
  'with',
  'tokens',
  'slowly',
  'while',
  'others',
  'wait',
  'in',
  'line',
  'for',
  'their',
  'turn',
  'on',
  'this',
  'simulated',
  'model',
  'that',
  'never',
  'thinks',
  'but',
  'always',
  'replies',
] as const;

/** 32-bit FNV-1a: a stable seed for deterministic output. */
export function seedOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** A rough token count (4 characters a token, at least one). */
export function countTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

/** The text of generated token `i` for a prompt with this seed. */
export function tokenText(seed: number, i: number): string {
  const word = WORDS[(seed + i * 7) % WORDS.length];
  return i === 0 ? word : ` ${word}`;
}

/** Sleeps `ms` (fractions allowed; ≤ 0 returns at once), rejecting with the signal's reason on abort. */
export async function sleep(ms: number, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  if (ms <= 0) return;
  await delay(ms, undefined, { signal });
}

/** Never resolves; rejects when the signal aborts. */
export function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/**
 * Emits `count` tokens, token i due at start + (i + 1) × tokenMs. Deadlines are absolute, so
 * sub-millisecond token times (large time scales) stay accurate on average: overdue tokens are
 * emitted back to back, yielding to the event loop now and then. No busy waiting.
 */
export async function paceTokens(
  count: number,
  tokenMs: number,
  signal: AbortSignal,
  onToken: (i: number) => void | Promise<void>,
): Promise<void> {
  const start = performance.now();
  let sinceYield = 0;
  for (let i = 0; i < count; i++) {
    const wait = start + (i + 1) * tokenMs - performance.now();
    if (wait >= 1) {
      await sleep(wait, signal);
      sinceYield = 0;
    } else if (++sinceYield >= 64) {
      await yieldToLoop();
      sinceYield = 0;
    }
    signal.throwIfAborted();
    await onToken(i);
  }
}

/** A deterministic unit-length 8-dimensional embedding of a text. */
export function embed(text: string): number[] {
  const digest = createHash('sha256').update(text).digest();
  const raw = Array.from({ length: 8 }, (_, i) => digest.readUInt16LE(i * 2) / 32_767.5 - 1);
  const norm = Math.hypot(...raw) || 1;
  return raw.map((v) => v / norm);
}

/** OpenAI `encoding_format: "base64"`: little-endian float32 bytes. */
export function embeddingBase64(vector: number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((v, i) => bytes.writeFloatLE(v, i * 4));
  return bytes.toString('base64');
}
