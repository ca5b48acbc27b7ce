/** The work a request does, as the analytics and cost fits measure it. */
export interface WorkMeasure {
  promptBytes?: number;
  promptTokens?: number;
  tokensGenerated?: number;
  imagePixels?: number;
  imageSteps?: number;
  imageCount?: number;
  audioSeconds?: number;
  /** The engine's own report of its time on the job (llama-server's `timings`), ms. */
  engineMs?: number;
}

/** `"1024x768"` → [1024, 768]; undefined when absent or malformed. */
export function parseSize(size: unknown): [number, number] | undefined {
  if (typeof size !== 'string') return undefined;
  const m = /^(\d+)x(\d+)$/.exec(size.trim());
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

export function imageWork(body: Record<string, unknown>, defaults = { size: '512x512', steps: 20 }): WorkMeasure {
  const [w, h] = parseSize(body.size ?? defaults.size) ?? parseSize(defaults.size)!;
  const steps = typeof body.steps === 'number' ? body.steps : defaults.steps;
  const n = typeof body.n === 'number' ? body.n : 1;
  return { imagePixels: w * h, imageSteps: steps, imageCount: n };
}

/** Seconds of audio in a PCM WAV file, read from its header; undefined when it is not a WAV this can read. */
export function wavSeconds(buf: Uint8Array): number | undefined {
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  if (b.length < 12 || b.toString('ascii', 0, 4) !== 'RIFF' || b.toString('ascii', 8, 12) !== 'WAVE') return undefined;
  let off = 12;
  let byteRate = 0;
  while (off + 8 <= b.length) {
    const id = b.toString('ascii', off, off + 4);
    const size = b.readUInt32LE(off + 4);
    if (id === 'fmt ' && off + 20 <= b.length) byteRate = b.readUInt32LE(off + 8 + 8);
    if (id === 'data') {
      if (!byteRate) return undefined;
      const available = Math.min(size, b.length - off - 8);
      return available / byteRate;
    }
    off += 8 + size + (size % 2);
  }
  return undefined;
}

/** Prompt tokens of an OpenAI response or final usage chunk, else undefined. */
export function usagePromptTokens(body: unknown): number | undefined {
  const usage = (body as { usage?: { prompt_tokens?: unknown } } | null)?.usage;
  return typeof usage?.prompt_tokens === 'number' ? usage.prompt_tokens : undefined;
}

/** Generated tokens of a non-streamed OpenAI response: its usage, else undefined. */
export function usageTokens(body: unknown): number | undefined {
  const usage = (body as { usage?: { completion_tokens?: unknown } } | null)?.usage;
  return typeof usage?.completion_tokens === 'number' ? usage.completion_tokens : undefined;
}

/**
 * The engine's own time on a job, where it reports one: llama-server's (and the sim's, the built-in engine's)
 * `timings.prompt_ms + timings.predicted_ms`, on a response body or on the last chunk of a stream.
 */
export function engineReportedMs(body: unknown): number | undefined {
  const t = (body as { timings?: { prompt_ms?: unknown; predicted_ms?: unknown } } | null)?.timings;
  if (!t || typeof t !== 'object') return undefined;
  const p =
    typeof t.prompt_ms === 'number' && Number.isFinite(t.prompt_ms) && t.prompt_ms >= 0 ? t.prompt_ms : undefined;
  const g =
    typeof t.predicted_ms === 'number' && Number.isFinite(t.predicted_ms) && t.predicted_ms >= 0
      ? t.predicted_ms
      : undefined;
  return p === undefined && g === undefined ? undefined : (p ?? 0) + (g ?? 0);
}
