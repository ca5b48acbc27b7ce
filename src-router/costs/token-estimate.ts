/**
 * Token estimates for text lending (LLM-2, LLM-3). Tokens are estimated, never counted: body bytes divided by a
 * bytes-per-token ratio measured from the model's own traffic, pulled conservative by the ratio's spread.
 */

/** One finished request of the model: its raw body size and what the engine reported using. */
export interface TokenSample {
  bodyBytes: number;
  promptTokens: number;
  /** Tokens generated (usage.completion_tokens), when known. */
  answerTokens?: number | null;
}

export interface TokenProfile {
  /** The conservative ratio used for estimates (fewer bytes per token → more tokens estimated). */
  bytesPerToken: number;
  meanBytesPerToken: number;
  /** Sample standard deviation of the measured ratio. */
  spreadBytesPerToken: number;
  /** Mean tokens generated per answer, null when no sample reported it. */
  meanAnswerTokens: number | null;
  samples: number;
  /** The largest body measured: the ratio is not stretched far beyond what it was measured on. */
  maxBodyBytes: number;
}

/**
 * How far beyond the largest measured body the ratio is trusted. A short chat's body is mostly JSON around the
 * message, so its ratio says little about a body many times larger: past this factor the safe bound is used.
 */
export const PROFILE_REACH = 2;

/**
 * The model's token profile, or null below `minSamples` usable samples ("A model with no measured token profile
 * has no size estimate, the same discipline cluster.scheduling_min_samples already applies to cost fitting").
 *
 * Interpretation ("pulled conservative by the ratio's own measured spread rather than a configured margin"):
 * ratio = mean − 1 σ (sample σ), floored at the lowest ratio actually measured, so a skewed spread can never
 * drive the ratio to zero or below and no configured margin is involved.
 */
export function tokenProfile(samples: TokenSample[], minSamples: number): TokenProfile | null {
  const ok = samples.filter(
    (s) => Number.isFinite(s.bodyBytes) && s.bodyBytes > 0 && Number.isFinite(s.promptTokens) && s.promptTokens > 0,
  );
  const n = ok.length;
  if (n === 0 || n < minSamples) return null;
  const ratios = ok.map((s) => s.bodyBytes / s.promptTokens);
  const mean = ratios.reduce((a, r) => a + r, 0) / n;
  const spread = n > 1 ? Math.sqrt(ratios.reduce((a, r) => a + (r - mean) ** 2, 0) / (n - 1)) : 0;
  const answers = ok
    .map((s) => s.answerTokens)
    .filter((a): a is number => typeof a === 'number' && Number.isFinite(a) && a >= 0);
  return {
    bytesPerToken: Math.max(
      mean - spread,
      ratios.reduce((m, r) => (r < m ? r : m), Infinity),
    ),
    meanBytesPerToken: mean,
    spreadBytesPerToken: spread,
    meanAnswerTokens: answers.length ? answers.reduce((a, x) => a + x, 0) / answers.length : null,
    samples: n,
    maxBodyBytes: ok.reduce((m, x) => Math.max(m, x.bodyBytes), 0),
  };
}

/** Estimated prompt tokens of a body; null without a profile. */
export function estimatePromptTokens(bodyBytes: number, profile: TokenProfile | null): number | null {
  if (!profile) return null;
  return Math.ceil(Math.max(0, bodyBytes) / profile.bytesPerToken);
}

/**
 * PROBE-2 before any profile: a size that needs no measurement and is never below the truth — the body's bytes
 * (a tokenizer never makes more tokens than bytes: byte-fallback vocabularies spend at most one token per byte,
 * and the JSON around the messages outweighs any chat template's markers) plus the answer's room (the client's
 * max_tokens, else cluster.scheduling_context_reserve).
 */
export function tokenUpperBound(bodyBytes: number, maxTokens: number | undefined, contextReserve: number): number {
  return Math.max(0, Math.ceil(bodyBytes)) + (maxTokens ?? contextReserve);
}

/**
 * LLM-2/3: the context a request needs = prompt estimate + the answer's room: the client's max_tokens when
 * stated, else max(cluster.scheduling_context_reserve, the measured mean answer) ("the reserve is only the
 * floor ... the rest comes from the same measured history"), never more than the safe upper bound. Without a
 * profile there is no estimate, and the safe upper bound stands in (PROBE-2: a helper whose window surely holds
 * the work is probed before the owner has measured anything).
 */
export function estimateTokens(
  bodyBytes: number,
  profile: TokenProfile | null,
  maxTokens: number | undefined,
  contextReserve: number,
): number {
  const bound = tokenUpperBound(bodyBytes, maxTokens, contextReserve);
  const prompt = estimatePromptTokens(bodyBytes, profile);
  // No profile, or a body far larger than any the profile was measured on: the safe bound, not an extrapolation.
  if (prompt === null || !profile || (profile.maxBodyBytes > 0 && bodyBytes > PROFILE_REACH * profile.maxBodyBytes))
    return bound;
  const answer = maxTokens ?? Math.max(contextReserve, Math.ceil(profile.meanAnswerTokens ?? 0));
  return Math.min(bound, prompt + answer);
}

export interface QueuedTextRequest {
  bodyBytes: number;
  maxTokens?: number;
}

/** ModelState.meanHeldTokens: mean estimated size (the safe bound without a profile) of the owner's lendable queued requests; null without requests. */
export function meanEstimatedTokens(
  requests: QueuedTextRequest[],
  profile: TokenProfile | null,
  contextReserve: number,
): number | null {
  if (requests.length === 0) return null;
  let sum = 0;
  for (const r of requests) sum += estimateTokens(r.bodyBytes, profile, r.maxTokens, contextReserve);
  return sum / requests.length;
}

/**
 * Work measure of a held text request for pricing (ModelState.heldWork): the tokens it is expected to generate,
 * i.e. the measured mean answer capped by the client's max_tokens; the cap alone when the history has no answer
 * sizes; null when neither is known (the caller then has no work measure for the request).
 */
export function expectedAnswerTokens(profile: TokenProfile | null, maxTokens: number | undefined): number | null {
  const mean = profile?.meanAnswerTokens ?? null;
  if (mean === null) return maxTokens ?? null;
  return Math.round(maxTokens === undefined ? mean : Math.min(maxTokens, mean));
}
