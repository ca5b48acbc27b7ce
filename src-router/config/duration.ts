import { z } from 'zod';

/** Durations are written as the spec writes them: `250ms`, `5s`, `1.5s`, `3m`, `2h`, `14d`; a bare number means milliseconds. */
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PATTERN = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/;

export function parseDuration(input: string | number): number | undefined {
  if (typeof input === 'number') return Number.isFinite(input) && input >= 0 ? Math.round(input) : undefined;
  const m = PATTERN.exec(input);
  if (!m) return undefined;
  return Math.round(Number(m[1]) * UNIT_MS[m[2] ?? 'ms']);
}

export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    const size = UNIT_MS[unit];
    if (ms >= size && ms % (size / 10) === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/** The longest delay a timer can wait (2^31 − 1 ms, about 24.8 days): a longer one would fire at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Bounds of a duration field. `timer: false` for spans that only bound a query (a sample window, a retention); a
 * timer's duration is at most MAX_TIMER_MS. `min` and `max` in milliseconds: an interval a loop waits for has a
 * floor (0 ms would spin the loop), a period a peer's liveness depends on a ceiling.
 */
export interface DurationBounds {
  timer?: boolean;
  min?: number;
  max?: number;
}

/**
 * A zod field for a duration, in milliseconds once parsed. The JSON Schema shows it as string | number. A duration
 * out of its bounds is refused with the field path, never wrapped into "at once" or clamped.
 */
export const duration = (fallback: string, o: DurationBounds = {}) =>
  z.union([z.string(), z.number()]).default(fallback).transform(toMs(o));

/** A duration field that may be left out (undefined: not set). */
export const optionalDuration = (o: DurationBounds = {}) =>
  z
    .union([z.string(), z.number()])
    .optional()
    .transform((v, ctx) => (v === undefined ? undefined : toMs(o)(v, ctx)));

function toMs(o: DurationBounds) {
  return (value: string | number, ctx: z.RefinementCtx): number => {
    const ms = parseDuration(value);
    if (ms === undefined) {
      ctx.addIssue({
        code: 'custom',
        message: `not a duration: ${JSON.stringify(value)} (write e.g. 500ms, 5s, 1.5s, 3m, 14d, or a number of milliseconds)`,
      });
      return z.NEVER;
    }
    if (o.timer !== false && ms > MAX_TIMER_MS) {
      ctx.addIssue({
        code: 'custom',
        message: `too long: ${JSON.stringify(value)} (at most 24d, the longest a timer can wait)`,
      });
      return z.NEVER;
    }
    if (!Number.isSafeInteger(ms)) {
      ctx.addIssue({ code: 'custom', message: `too long: ${JSON.stringify(value)}` });
      return z.NEVER;
    }
    if (o.min !== undefined && ms < o.min) {
      ctx.addIssue({
        code: 'custom',
        message: `too short: ${JSON.stringify(value)} (at least ${formatDuration(o.min)})`,
      });
      return z.NEVER;
    }
    if (o.max !== undefined && ms > o.max) {
      ctx.addIssue({
        code: 'custom',
        message: `too long: ${JSON.stringify(value)} (at most ${formatDuration(o.max)})`,
      });
      return z.NEVER;
    }
    return ms;
  };
}
